"""The check that every problem an operation answers with is listed for it, and titled as its
code is (tests/problem_codes.py), catches each kind of break."""

from __future__ import annotations

import json
from typing import Any, cast

from litestar import Litestar, get
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.testing import TestClient
from litestar.types import Scope

from service.api import problems
from service.api.app import create_app
from service.api.openapi import served_document
from service.api.problems import CATALOGUE, problem_details_config, title_of
from service.usecases.errors import NotFound
from tests import problem_codes

DOCUMENT: dict[str, Any] = json.loads(problem_codes.DOCUMENT.read_text())


def test_a_code_the_operation_does_not_list_is_reported() -> None:
    assert problem_codes.undeclared({("getGame", 404, "not-found")}, DOCUMENT) == []
    assert problem_codes.undeclared({("getGame", 409, "table-full")}, DOCUMENT) == [
        "getGame answered 409 `table-full`, which it does not list"
    ]
    assert problem_codes.undeclared({("getGame", 404, "forbidden")}, DOCUMENT)  # wrong status


def test_a_title_other_than_the_codes_is_reported() -> None:
    assert problem_codes.mistitled({("not-found", "Not found")}) == []
    assert problem_codes.mistitled({("not-found", "Not found: /games/1")})


def test_every_code_has_one_title() -> None:
    for code in CATALOGUE:
        assert title_of(code) and "/" not in title_of(code), code


@get("/probe", operation_id="probe")
async def probe() -> None:
    raise NotFound("Nothing here.")


def test_the_recorder_sees_what_the_app_answers() -> None:
    app = Litestar([probe], plugins=[ProblemDetailsPlugin(problem_details_config())])
    app.asgi_handler = problem_codes.recording(app.asgi_handler)
    with TestClient(app=app) as client:
        answer = client.get("/probe")
    assert answer.status_code == 404
    assert ("probe", 404, "not-found") in problem_codes.OBSERVED
    assert ("not-found", "Not found") in problem_codes.TITLED
    assert answer.json()["retryable"] is False
    assert answer.json()["doc_url"] == "/docs/errors#not-found"


def test_a_problem_whose_retry_or_link_is_not_its_codes_is_reported() -> None:
    scope = cast("Scope", {"type": "http"})
    before = set(problem_codes.MISDESCRIBED)
    good = {
        "type": "urn:swarm:problem:overloaded",
        "title": problems.title_of("overloaded"),
        "code": "overloaded",
        "retryable": True,
        "doc_url": "/docs/errors#overloaded",
        "status": 503,
        "detail": "x",
    }
    problem_codes._record(scope, 503, json.dumps(good).encode())
    assert before == problem_codes.MISDESCRIBED
    bad = {**good, "retryable": False}
    problem_codes._record(scope, 503, json.dumps(bad).encode())
    assert problem_codes.MISDESCRIBED - before == {
        "`overloaded` answered with retryable False, not True"
    }
    problem_codes.MISDESCRIBED.clear()
    problem_codes.MISDESCRIBED.update(before)


def test_every_429_and_503_is_worth_retrying_and_so_are_the_races() -> None:
    """Issue 44 item 11: whether the very same request can succeed is the code's; `conflict`
    and `concurrent-change` are both races (retry.until_applied out of budget, an expired hold,
    register's player stream moving three times), so a retry can succeed."""
    retryable = {code for code, entry in CATALOGUE.items() if entry.retryable}
    assert {c for c, e in CATALOGUE.items() if e.status in (429, 503)} <= retryable
    assert {"conflict", "concurrent-change"} <= retryable


def test_submit_move_lists_the_rules_it_can_break_and_no_account_codes() -> None:
    operation = served_document(create_app())["paths"]["/games/{game_id}/moves"]["post"]
    conflicts = set(operation["responses"]["409"]["x-problem-codes"])
    assert {"bee-not-in-hand", "already-confirmed", "move-id-reused"} <= conflicts
    assert not conflicts & {"already-registered", "table-full", "name-taken"}
