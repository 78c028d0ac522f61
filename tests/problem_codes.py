"""Every problem code an operation answers with in the tests is one its operation lists
(issue 27): each handler declares what it refuses with (`service.api.problems.refuses`), the
document lists exactly that under each status (`x-problem-codes`), and this records what the
app really answers, over every e2e, contract and schemathesis run in the test process, so a
handler that can raise a code its operation does not list fails the run
(`pytest_sessionfinish` in tests/conftest.py).

The recorder sits just inside the edge layer (it wraps what `Edge` wraps), where the router has
named the operation; answers of the edge itself (413 at once, 408, 503 past capacity) name no
operation and are the edge's (declared on every operation by `common_codes`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from service.api.problems import doc_url, retryable, title_of

DOCUMENT = Path(__file__).resolve().parents[1] / "openapi" / "openapi.json"

# (operation id, status, code) of every problem answered so far in this test process, and
# (code, title) of every problem, routed or not.
OBSERVED: set[tuple[str, int, str]] = set()
TITLED: set[tuple[str, str]] = set()
# What a problem said beyond its title that is not its code's (`problems.members`: `type`,
# `retryable`, `doc_url` are the same for every occurrence of a code).
MISDESCRIBED: set[str] = set()


def recording(app: ASGIApp) -> ASGIApp:
    """`app`, recording the code of every problem it answers with, by operation."""

    async def recorder(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        status = 0
        problem = False
        body: list[bytes] = []

        async def watch(message: Message) -> None:
            nonlocal status, problem
            if message["type"] == "http.response.start":
                status = message["status"]
                problem = any(
                    k.lower() == b"content-type" and v.startswith(b"application/problem+json")
                    for k, v in message.get("headers", ())
                )
            elif message["type"] == "http.response.body" and problem:
                body.append(message.get("body", b""))
                if not message.get("more_body", False):
                    _record(scope, status, b"".join(body))
            await send(message)

        await app(scope, receive, watch)

    return recorder


def _record(scope: Scope, status: int, body: bytes) -> None:
    try:
        answer = json.loads(body)
    except ValueError:
        answer = {}
    code = answer.get("code") if isinstance(answer, dict) else None
    code = code if isinstance(code, str) else "<no code>"
    TITLED.add((code, str(answer.get("title")) if isinstance(answer, dict) else "<none>"))
    if isinstance(answer, dict):
        expected = {
            "type": f"urn:swarm:problem:{code}",
            "retryable": retryable(code),
            "doc_url": doc_url(code),
        }
        MISDESCRIBED.update(
            f"`{code}` answered with {key} {answer.get(key)!r}, not {expected[key]!r}"
            for key in ("type", "retryable", "doc_url")
            if answer.get(key) != expected[key]
        )
    operation = getattr(scope.get("route_handler"), "operation_id", None)
    if isinstance(operation, str):
        OBSERVED.add((operation, status, code))


def mistitled(titled: set[tuple[str, str]]) -> list[str]:
    """The problems whose title is not their code's one title (`problems.title_of`)."""
    return sorted(
        f"`{code}` answered with the title {title!r}, not {title_of(code)!r}"
        for code, title in titled
        if title != title_of(code)
    )


def listed(document: dict[str, Any]) -> dict[str, dict[int, set[str]]]:
    """Each operation's codes by status, as the document lists them."""
    out: dict[str, dict[int, set[str]]] = {}
    for item in document["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict) and "operationId" in operation:
                out[operation["operationId"]] = {
                    int(status): set(response.get("x-problem-codes", ()))
                    for status, response in operation["responses"].items()
                }
    return out


def undeclared(
    observed: set[tuple[str, int, str]], document: dict[str, Any] | None = None
) -> list[str]:
    """The observed answers the document does not list for their operation and status."""
    codes = listed(document or json.loads(DOCUMENT.read_text()))
    return sorted(
        f"{operation} answered {status} `{code}`, which it does not list"
        for operation, status, code in observed
        if operation in codes and code not in codes[operation].get(status, set())
    )
