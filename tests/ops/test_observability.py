"""Request ids on every response, /health/live and /health/ready, /metrics, tracing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from service.api import app as app_module
from service.api.app import create_app
from service.settings import Settings


@pytest.fixture
async def client(database_url: str) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with AsyncTestClient(app=create_app(database_url, run_clock=False)) as client:
        yield client


def _metric(text: str, name: str, **labels: str) -> float:
    """The sum of a metric's samples whose labels include `labels`."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        match = re.match(rf"^{re.escape(name)}(\{{(.*)\}})? (\S+)$", line)
        if not match:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            total += float(match.group(3))
    return total


async def test_every_response_has_a_request_id(client: AsyncTestClient[Litestar]) -> None:
    unknown = await client.get("/no/such/path")
    assert unknown.status_code == 404
    assert unknown.headers["content-type"].startswith("application/problem+json")
    assert re.fullmatch(r"[0-9a-f]{32}", unknown.headers["x-request-id"])
    mine = await client.get("/health/live", headers={"X-Request-ID": "trace-me-42"})
    assert mine.headers["x-request-id"] == "trace-me-42"
    refused = await client.post(
        "/guests", content=b"{", headers={"content-type": "application/json"}
    )
    assert refused.status_code == 400 and refused.headers["x-request-id"]


async def test_liveness_and_readiness(client: AsyncTestClient[Litestar]) -> None:
    live = await client.get("/health/live")
    assert live.status_code == 200 and live.json() == {"status": "ok"}
    ready = await client.get("/health/ready")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "database": "ok", "migrations": "current"}
    assert (await client.get("/health")).status_code == 200  # as before, for the helpers


async def test_not_ready_while_a_migration_is_pending(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        app_module, "expected_migrations", lambda: ["0001_event_store.sql", "9999_future.sql"]
    )
    async with AsyncTestClient(app=create_app(database_url, run_clock=False)) as client:
        ready = await client.get("/health/ready")
        assert ready.status_code == 503
        assert ready.json()["code"] == "migrations-pending"
        assert (await client.get("/health/live")).status_code == 200


async def test_metrics(client: AsyncTestClient[Litestar]) -> None:
    before = (await client.get("/metrics")).text
    guest = await client.post("/guests", json={"name": "Metrics"})
    auth = {"Authorization": f"Bearer {guest.json()['token']}"}
    game = (await client.post("/solo-tables", json={"players": 4}, headers=auth)).json()
    gid = game["game"]["game_id"]
    bee = (await client.get(f"/games/{gid}", headers=auth)).json()["hand"][0]
    moved = await client.post(
        f"/games/{gid}/moves",
        json={"type": "tap", "bee": bee, "move_id": uuid.uuid4().hex},
        headers=auth,
    )
    assert moved.status_code == 200, moved.text
    scrape = await client.get("/metrics")
    assert scrape.status_code == 200
    text = scrape.text
    # Latency by operation, from Litestar's PrometheusConfig.
    assert _metric(text, "swarm_http_request_duration_seconds_count", operation="submitMove") >= 1
    assert _metric(text, "swarm_http_request_duration_seconds_count", operation="createGuest") >= 1
    assert _metric(text, "swarm_moves_total") == _metric(before, "swarm_moves_total") + 1
    assert _metric(text, "swarm_pool_wait_seconds_count") > _metric(
        before, "swarm_pool_wait_seconds_count"
    )
    for name in (
        "swarm_open_streams",
        "swarm_games_running",
        "swarm_timer_lateness_seconds_count",
        "swarm_append_conflicts_total",
        "swarm_rate_limited_total",
        "swarm_overloaded_total",
    ):
        assert re.search(rf"^{name}(\{{.*\}})? ", text, re.M), name


async def test_rate_limit_refusals_are_counted(database_url: str) -> None:
    app = create_app(database_url, run_clock=False, rate_limit_per_second=2)
    async with AsyncTestClient(app=app) as client:
        before = _metric((await client.get("/metrics")).text, "swarm_rate_limited_total")
        statuses = [(await client.get("/tables")).status_code for _ in range(6)]
        assert 429 in statuses
        after = _metric((await client.get("/metrics")).text, "swarm_rate_limited_total")
        assert after - before == statuses.count(429)


async def test_tracing_is_off_unless_configured(database_url: str, capfd: Any) -> None:
    off = create_app(database_url)
    assert not any(type(p).__name__ == "OpenTelemetryPlugin" for p in off.plugins)
    on = create_app(settings=Settings(database_url=database_url, tracing="console"))
    plugin: Any = next(p for p in on.plugins if type(p).__name__ == "OpenTelemetryPlugin")
    async with AsyncTestClient(app=on) as client:
        assert (await client.get("/no/such/path")).status_code == 404
    plugin.config.tracer_provider.force_flush()
    out = capfd.readouterr().out
    assert '"trace_id"' in out and "GET" in out


def test_a_library_record_with_an_exception_is_one_json_line_once_the_app_is_built(
    database_url: str,
) -> None:
    # What asyncpg's pool logs while PostgreSQL shuts down; Litestar's structlog plugin once
    # replaced the process's logging and dropped such a record ("--- Logging error ---").
    # A process of its own: logging is process-wide.
    script = textwrap.dedent(
        f"""
        import logging
        import asyncpg
        from service.api.app import create_app
        from service.logs import configure_logging

        configure_logging("INFO")
        create_app({database_url!r}, run_clock=False)
        try:
            raise asyncpg.exceptions.CannotConnectNowError("the database system is shutting down")
        except asyncpg.PostgresError:
            logging.getLogger("asyncpg.pool").warning("pool floor not restored", exc_info=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert "Logging error" not in done.stderr, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    [record] = [r for r in records if r.get("logger") == "asyncpg.pool"]
    assert record["event"] == "pool floor not restored" and record["level"] == "warning"
    assert "CannotConnectNowError: the database system is shutting down" in record["exception"]
