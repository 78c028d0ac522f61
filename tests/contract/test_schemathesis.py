"""Schemathesis (every check it has) against the running app: generated requests, valid and invalid,
never get a 5xx, and every response matches the OpenAPI document (status, content type, body,
headers); then the stateful phase walks the document's own `links` (a solo table to its game, a
move, the game again). Nothing generated is adjusted: a request the document calls valid is one the
server takes (issue 27). The streams are called too, with a read timeout: a stream that is still
open when it runs out has answered its status and headers correctly."""

from __future__ import annotations

import os
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from service.api.bodies import NAME_FORMAT
from service.domain.names import NAME_MAX, InvalidName, display_name


def _is_name(raw: str) -> bool:
    try:
        display_name(raw)
    except InvalidName:
        return False
    return True


# A name's `pattern` in the document is a superset of the rule every tool reads alike, and its
# `format` names the rule (issue 44 item 10): a valid name is drawn from the rule itself, from
# the characters a name is made of (letters, digits, punctuation, symbols, spaces, marks).
NAMES = st.text(
    st.characters(categories=["L", "N", "P", "S", "Zs", "Mn", "Mc"]), min_size=1, max_size=NAME_MAX
).filter(_is_name)
schemathesis.openapi.format(NAME_FORMAT, NAMES)


@pytest.fixture(scope="session")
def api_schema(live_server: str) -> Any:
    # The document is built on its first request (a few seconds on a busy machine).
    schema = schemathesis.openapi.from_url(f"{live_server}/docs/openapi.json", timeout=120)
    # logout would revoke the one token every generated request uses; tests/e2e covers it.
    return schema.exclude(operation_id=["logout"])


STREAMS = {"streamGameEvents", "streamTableEvents"}
STREAM_TIMEOUT = 2.0  # seconds a stream may stay silent before the call stops reading


def call_and_validate(case: Any, base_url: str, headers: dict[str, str]) -> None:
    """Every check; a stream still open after `STREAM_TIMEOUT` is read only as far as its
    status line and headers, which are checked by hand (the body is open-ended)."""
    if case.operation.definition.raw.get("operationId") not in STREAMS:
        case.call_and_validate(base_url=base_url, headers=headers, timeout=30)
        return
    url = base_url + case.formatted_path
    merged = {**(case.headers or {}), **headers}
    with requests.get(
        url, params=case.query, headers=merged, stream=True, timeout=STREAM_TIMEOUT
    ) as response:
        assert response.status_code < 500, response.status_code
        documented = case.operation.definition.raw["responses"]
        assert str(response.status_code) in documented, response.status_code
        kind = response.headers.get("content-type", "")
        if response.status_code == 200:
            assert kind.startswith("text/event-stream"), kind
            try:
                for _ in response.iter_lines():
                    pass  # an ended game's stream ends by itself
            except requests.exceptions.ConnectionError:
                pass  # still open when the read timeout ran out: alive, as documented
        else:
            assert kind.startswith("application/problem+json"), kind
            assert response.json()["code"], response.text


@pytest.fixture(scope="session")
def seated(live_server: str) -> dict[str, str]:
    """A guest at a solo table, so generated requests reach real tables and games too."""
    guest = httpx.post(f"{live_server}/guests", json={"name": "Fuzz"}).json()
    headers = {"Authorization": f"Bearer {guest['token']}"}
    table = httpx.post(f"{live_server}/solo-tables", json={}, headers=headers).json()
    return {
        "token": guest["token"],
        "table_id": table["table_id"],
        "game_id": table["game"]["game_id"],
    }


# The in-repo smoke; `SCHEMATHESIS_EXAMPLES=10000 make fuzz` runs it at volume.
EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "150"))
STATEFUL_EXAMPLES = max(10, EXAMPLES // 5)
SMOKE = "SCHEMATHESIS_EXAMPLES" not in os.environ


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_api_conforms_and_never_fails(
    data: st.DataObject,
    mode: GenerationMode,
    api_schema: Any,
    live_server: str,
    seated: dict[str, str],
) -> None:
    case = data.draw(api_schema.as_strategy(mode))
    # What the negative mode broke must stay broken: a mutated path or header is sent as
    # generated (putting a real id or the token back would make the request valid again).
    mutated = {
        str(location.value) if hasattr(location, "value") else str(location)
        for location, info in (case.meta.components.items() if case.meta else ())
        if info.mode == GenerationMode.NEGATIVE
    }
    params = case.path_parameters or {}
    # Half the generated ids point at a real table or game, so deeper code paths are reached.
    for key in ("table_id", "game_id"):
        if key in params and "path" not in mutated and data.draw(st.booleans()):
            params[key] = seated[key]
    headers = dict(case.headers or {})
    # Mostly authenticated, sometimes not.
    if "header" not in mutated and data.draw(st.integers(0, 9)) > 0:
        headers.setdefault("Authorization", f"Bearer {seated['token']}")
    call_and_validate(case, live_server, headers)


def test_stateful_links_lead_somewhere_valid(api_schema: Any, live_server: str) -> None:
    """The stateful phase: schemathesis chains operations through the document's `links`."""
    machine = api_schema.exclude(operation_id=sorted(STREAMS)).as_state_machine()

    answered: dict[str, set[int]] = {}

    class Workflow(machine):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            # Each run as a new guest: which rules can run next depends on the answers so far,
            # so the same steps must meet the same state each time (a guest who already hosts
            # five tables would be refused the next one in one run and not in another, which
            # Hypothesis reports as a flaky strategy).
            super().__init__()
            guest = httpx.post(f"{live_server}/guests", json={"name": "Flow"}, timeout=30)
            assert guest.status_code == 201, guest.text
            self.auth = {"Authorization": f"Bearer {guest.json()['token']}"}

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            op_id = case.operation.definition.raw.get("operationId")
            answered.setdefault(op_id, set()).add(response.status_code)

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": live_server, "headers": self.auth, "timeout": 30}

    Workflow.run(
        settings=settings(
            max_examples=STATEFUL_EXAMPLES,
            stateful_step_count=6,
            deadline=None,
            # The smoke's 30 runs of 6 steps follow a link to a 200 under most seeds, not all
            # (seed 1 reached none, on 0.5.0 too): in `make test` the same runs every time, so
            # the assertion below is about the document, not luck; `make fuzz` stays random.
            derandomize=SMOKE,
            suppress_health_check=list(HealthCheck),
        )
    )
    # The links were followed: a table or game reached from a create answer was read or
    # played in, not only random ids refused.
    assert 201 in answered.get("createSoloTable", set()) | answered.get("createTable", set())
    targets = ("getGame", "submitMove", "getTable", "listGameEvents", "joinTable", "leaveTable")
    targets += ("contributeSeed",)  # type: ignore[assignment]
    assert any(200 in answered.get(op, set()) for op in targets), answered
