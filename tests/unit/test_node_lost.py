"""A Citus worker out of reach mid-statement comes as an internal error (XX000), not a
connection error: the API answers it 503 `database-unavailable`, as any database outage, and
keeps 500 for internal errors that are bugs (found registering just after a worker restart)."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from litestar import Litestar, get
from litestar.testing import TestClient

from service.api import problems
from service.store.pool import NODE_LOST_ERRORS, node_lost

LOST = "failure on connection marked as essential: 10.231.13.12:5432"


@pytest.mark.parametrize(
    ("message", "lost"),
    [
        (LOST, True),
        ("connection to the remote node 10.231.9.11:5432 failed with the following error", True),
        ("could not establish any connections to the node 10.0.0.2:5432", True),
        ("cache lookup failed for relation 16384", False),
    ],
)
def test_which_internal_errors_are_a_worker_out_of_reach(message: str, lost: bool) -> None:
    assert node_lost(asyncpg.InternalServerError(message)) is lost


def answer(message: str) -> Any:
    @get("/")
    async def fails() -> None:
        raise asyncpg.InternalServerError(message)

    app = Litestar(
        [fails], exception_handlers=dict.fromkeys(NODE_LOST_ERRORS, problems.node_lost_or_bug)
    )
    with TestClient(app) as client:
        return client.get("/")


def test_a_worker_out_of_reach_is_503_and_a_bug_stays_500() -> None:
    away = answer(LOST)
    assert away.status_code == 503 and away.json()["code"] == "database-unavailable"
    assert away.headers["retry-after"] == "2"
    bug = answer("cache lookup failed for relation 16384")
    assert bug.status_code == 500 and bug.json()["code"] == "internal-error"
