"""Shared fixtures. The database ones start PostgreSQL lazily: unit tests never touch it.

Where the database comes from: see ``service.store.database.provide_test_database_url``
(DATABASE_URL, else Testcontainers if a Docker engine answers, else embedded PostgreSQL).
Tests use unique (uuid) stream ids, so they share one database and never clean up.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import settings

from service.api.edge import Edge
from service.store.database import drop_database, ensure_database, provide_test_database_url
from service.store.events import EventStore
from service.store.migrate import migrate
from service.store.pool import Pool, open_pool
from tests import problem_codes

# Every test client shares one address ("testclient", or 127.0.0.1 for live servers): the
# per-address sign-up limits are off for the suite, and on in tests/e2e/test_limits.py.
os.environ.setdefault("SWARM_GUESTS_PER_HOUR", "0")
os.environ.setdefault("SWARM_ACCOUNTS_PER_HOUR", "0")

# Hypothesis' 200 ms deadline per example is a timed assertion: on a loaded machine (two xdist
# workers beside a browser) a plain example took 285 ms and failed as "flaky". Speed is measured
# in benchmarks, not asserted in tests, so the suite's profile has no deadline.
settings.register_profile("swarm", deadline=None)
settings.load_profile("swarm")


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    """URL of a migrated, throw-away database for this test session."""
    if os.environ.get("SWARM_TESTS_WITHOUT_DATABASE"):
        pytest.fail(
            "this tier runs without a database (make test-unit): a test that needs PostgreSQL"
            " belongs in tests/integration or tests/e2e"
        )
    with provide_test_database_url() as url:
        migrate(url)
        yield url


@pytest.fixture(scope="session")
async def pool(database_url: str) -> AsyncIterator[Pool]:
    """The application's pool (connections run as ``swarm_app`` when possible)."""
    pool = await open_pool(database_url, min_size=1, max_size=30)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture
def own_database(database_url: str) -> Iterator[str]:
    """A database no other test holds connections to, so its sessions can be counted
    (`tests.sessions.open_sessions`)."""
    name = f"swarm_own_{uuid.uuid4().hex[:8]}"
    url = ensure_database(database_url, name)
    migrate(url)
    yield url
    drop_database(database_url, name)


@pytest.fixture
def event_store(pool: Pool) -> EventStore:
    return EventStore(pool)


# Every app the tests build records the problem codes it answers with, by operation, and the
# run fails if one is not listed for its operation (tests/problem_codes.py).
_edge_init = Edge.__init__


def _recording_edge(self: Edge, app: object, **options: object) -> None:
    _edge_init(self, problem_codes.recording(app), **options)  # type: ignore[arg-type]


Edge.__init__ = _recording_edge  # type: ignore[method-assign]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    worker_output = getattr(session.config, "workeroutput", None)
    if worker_output is not None:
        # A pytest-xdist worker (`make test`): it hands what it saw to the controller, which
        # checks what all of them saw (`pytest_testnodedown`, then this hook there).
        worker_output["problem_codes"] = (
            sorted(problem_codes.OBSERVED),
            sorted(problem_codes.TITLED),
            sorted(problem_codes.MISDESCRIBED),
        )
        return
    # The titles of refusals come from their classes (`title_of`): an xdist controller ran no
    # test, so it imports the app (and with it every refusal) itself.
    import service.api.app  # noqa: F401

    wrong = problem_codes.undeclared(problem_codes.OBSERVED)
    wrong += problem_codes.mistitled(problem_codes.TITLED)
    wrong += sorted(problem_codes.MISDESCRIBED)
    if wrong:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("")
            reporter.write_line(
                "Problem codes answered that their operation does not list (declare them with "
                "`refuses` on the handler), or with a title, type, retryable or doc_url not "
                "their code's:",
                red=True,
            )
            for line in wrong:
                reporter.write_line(f"  {line}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist's controller: a worker finished; keep the problem codes it saw."""
    observed, titled, misdescribed = node.workeroutput.get("problem_codes", ([], [], []))
    problem_codes.OBSERVED.update((op, int(status), code) for op, status, code in observed)
    problem_codes.TITLED.update((code, title) for code, title in titled)
    problem_codes.MISDESCRIBED.update(misdescribed)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say in red when the Citus tests were skipped for want of a cluster (tests/citus)."""
    skipped = [
        r
        for r in terminalreporter.stats.get("skipped", [])
        if r.nodeid.startswith("tests/citus") and "no Citus cluster" in str(r.longrepr)
    ]
    if skipped:
        terminalreporter.write_line(
            f"WARNING: {len(skipped)} Citus test(s) SKIPPED: no Citus cluster answers"
            " (make citus-up, or make test-citus)",
            red=True,
            bold=True,
        )
