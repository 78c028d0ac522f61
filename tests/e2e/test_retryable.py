"""Issue 44, item 11: retry by category, not by list. Every problem says whether the same
request, sent again unchanged, can succeed (`retryable`), whoever answers it: a handler, the
framework, the input guard or the edge; docs/errors.md gives each code's value beside it, so
a client needs no hand-copied list of codes."""

from __future__ import annotations

from pathlib import Path

from service.api.problems import CATALOGUE
from tests.e2e.api_client import Api
from tests.e2e.test_solo_api import assert_problem

ERRORS = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def test_the_catalogue_says_which_codes_a_client_may_resend_as_they_are() -> None:
    assert {code for code, entry in CATALOGUE.items() if entry.retryable} == {
        "concurrent-change",
        "conflict",
        "database-unavailable",
        "idempotency-key-in-use",
        "internal-error",
        "migrations-pending",
        "overloaded",
        "request-timeout",
        "too-many-analyses",
        "too-many-logins",
        "too-many-requests",
        "too-many-sign-ups",
    }
    rows = [line for line in ERRORS.read_text().splitlines() if line.startswith("| [`")]
    said = {row.split("`")[1]: row.rstrip(" |").rsplit("| ", 1)[1] for row in rows}
    assert said == {c: "yes" if e.retryable else "no" for c, e in CATALOGUE.items()}


async def test_every_layer_says_whether_to_resend(ada: Api, anon: Api) -> None:
    # a handler's refusal, the framework's, the input guard's, the edge's
    game = (await ada.solo_table())["game"]
    move = {"type": "confirm", "bee": 999, "move_id": "r-1"}
    path = f"/games/{game['game_id']}/moves"
    refused = await ada.client.post(path, json=move, headers=ada.headers)
    assert refused.json()["retryable"] is False
    assert_problem(await anon.client.get("/me"), 401, "unauthorized")
    malformed = await ada.client.get("/tables?offset=x", headers=ada.headers)
    assert_problem(malformed, 400, "bad-request")
    nul = await ada.client.get("/tables?stake=%00", headers=ada.headers)
    assert_problem(nul, 400, "bad-request")
    big = b'{"name": "' + b"x" * 2_000_000 + b'"}'
    too_large = await anon.client.post(
        "/guests", content=big, headers={"content-type": "application/json"}
    )
    assert_problem(too_large, 413, "body-too-large")
