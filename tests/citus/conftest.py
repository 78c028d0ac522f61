"""The Citus tier (`make test-citus`): the store on a coordinator and workers of Citus 13
(deploy/citus-cluster.sh, docs/scaling.md "The store on Citus").

`database_url` here is a fresh database on the cluster, created on every node and migrated by
`swarm migrate` (which distributes the tables, migration 0018), so the shared fixtures (`pool`,
`event_store`) and the contract suites run on Citus. The cluster is the one `make citus-up`
started (its URL in `$SWARM_CITUS_DIR/env`, /tmp/swarm-citus by default); without one every test
here is skipped, and the run says so in red.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.store.migrate import migrate
from service.store.pool import Pool, open_pool

# The e2e suite's players (tests/e2e/conftest.py): its flows, imported by the modules here, run
# on this folder's `database_url`, the cluster's, through `client` below.
from tests.e2e.conftest import ada, anon  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "citus-cluster.sh"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Outside `make test-citus` (SWARM_CITUS_TIER unset: `make test`), only the smoke of this
    folder runs."""
    if os.environ.get("SWARM_CITUS_TIER"):
        return
    here = Path(__file__).parent
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        inside = here in Path(str(item.path)).parents
        (dropped if inside and item.path.name != "test_smoke.py" else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def cluster_env() -> dict[str, str] | None:
    """The running cluster's settings (DATABASE_URL, SWARM_CITUS_MODE), or None."""
    path = Path(os.environ.get("SWARM_CITUS_DIR", "/tmp/swarm-citus")) / "env"
    if not path.is_file():
        return None
    env = dict(line.split("=", 1) for line in path.read_text().split() if "=" in line)
    try:
        with psycopg.connect(env["DATABASE_URL"], connect_timeout=5) as conn:
            conn.execute("select citus_version()")
    except (psycopg.Error, KeyError):
        return None
    return env


def cluster(*args: str) -> str:
    """Run deploy/citus-cluster.sh; its output."""
    run = subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=180, check=False
    )
    if run.returncode != 0:
        raise RuntimeError(f"citus-cluster.sh {' '.join(args)}: {run.stderr}")
    return run.stdout.strip()


def _missing(reason: str) -> None:
    pytest.skip(f"no Citus cluster: {reason} (make citus-up)")


@pytest.fixture(scope="session")
def citus_env() -> dict[str, str]:
    env = cluster_env()
    if env is None:
        _missing("no cluster answers (make citus-up starts one)")
    assert env is not None
    return env


def fresh_database() -> Iterator[str]:
    """A fresh database on every node of the cluster, migrated (the tables distributed), its
    URL; dropped afterwards."""
    name = f"swarm_t{uuid.uuid4().hex[:10]}"
    url = cluster("database", name)
    try:
        migrate(url)
        yield url
    finally:
        cluster("drop-database", name)


async def cluster_pool(database_url: str) -> AsyncIterator[Pool]:
    pool = await open_pool(database_url, min_size=1, max_size=30)
    try:
        yield pool
    finally:
        # At the end of a whole-suite run a connection's close once timed out (the teardown
        # then failed the last test of the worker): a pool that does not close in time is
        # terminated, its connections dropped; the database is dropped after it anyway.
        try:
            await asyncio.wait_for(pool.close(), 15)
        except (TimeoutError, OSError):
            pool.terminate()


@pytest.fixture(scope="session")
def database_url(citus_env: dict[str, str]) -> Iterator[str]:
    """A fresh database on every node of the cluster, migrated (the tables distributed)."""
    yield from fresh_database()


@pytest.fixture(scope="session")
async def pool(database_url: str) -> AsyncIterator[Pool]:
    """The cluster's pool, a fixture of this folder. Without it the suite's session-wide `pool`
    (tests/conftest.py) would be built on the cluster's `database_url` when a test here asks
    first, and handed, still on Citus, to every test that runs after it on the same worker."""
    async for each in cluster_pool(database_url):
        yield each


@pytest.fixture(scope="module")
async def client(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    """The e2e suite's app (its clock thread running) for one module, not the session as there:
    left running, its clock thread's claims (reads of every shard, every 0.25 s) would count in
    `citus_stat_counters` beside the writes test_router_writes.py measures."""
    async with AsyncTestClient(app=create_app(database_url)) as client:
        yield client


@pytest.fixture(autouse=True)
def _environment_kept() -> Iterator[None]:
    """Every test here leaves the process' environment as it found it: the bench's smoke
    (test_bench_smoke.py) sets SWARM_RUN_CLOCK=off for the servers it starts, and every app
    built after it (`create_app` reads its settings from the environment) would run without
    its clock thread: no timer fired in the clock, fault and rebalance tests after it."""
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)
