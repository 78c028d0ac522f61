"""The reads across shards while a worker is away (issue 46, docs/scaling.md "Reads across shards
while a worker is away"): the lobby, My games and the history answer at once from the workers
that answer, with `partial` true and exactly the rows of those workers; the leaderboard answers
503 `database-unavailable` at once; healed, each answers whole again. Once for a SIGKILLed
worker, once (netns mode) for one whose link is cut. The same reads through the plain
distributed statement (what they ran before) are timed beside them for the figures."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.store.citus_reads import CONNECT_TIMEOUT_MS, WHOLE_DEADLINE
from service.store.pool import UNAVAILABLE, Pool
from service.store.reads import StoredLobby
from tests.citus.conftest import cluster
from tests.e2e.api_client import Api
from tests.faults.conftest import summary

_WORKER_OF = """
select n.nodename, n.nodeport from pg_dist_placement p join pg_dist_node n using (groupid)
 where p.shardid = get_shard_id_for_distribution_column('events', %s::text)
"""

# The first read after a worker went away waits at most Citus' statement's deadline and then
# the connection timeout of asking each worker, 2 s, plus the rest of the request (the bounds
# leave room for a loaded 2-core machine); the reads after it know the worker is away and wait
# for nothing. Without this, the reads failed, after up to 9.5 s (docs/scaling.md).
FIRST = WHOLE_DEADLINE + CONNECT_TIMEOUT_MS / 1000 + 4.0
KNOWN = 2.0


def _worker(host: str, port: int) -> str:
    """The script's number of the worker at host:port (node N is .1N, or port 57400 + N)."""
    return host.rsplit(".", 1)[1][-1] if host.count(".") == 3 else str(port - 57400)


async def _timed(call: Awaitable[Any]) -> tuple[Any, float]:
    started = time.monotonic()
    answer = await call
    return answer, round(time.monotonic() - started, 3)


async def _old_path(pool: Pool) -> float:
    """The lobby as it was read before (one distributed statement): seconds until it fails."""
    started = time.monotonic()
    with pytest.raises(UNAVAILABLE):
        await StoredLobby(pool).page("any", False, 21, 0)
    return round(time.monotonic() - started, 2)


async def test_reads_across_shards_answer_partial_or_503_at_once_while_a_worker_is_away(
    database_url: str, citus_env: dict[str, str], pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_METRICS", "0")  # its gauge reads every shard's lobby rows
    app = create_app(database_url, run_clock=False)
    figures: dict[str, Any] = {}
    with psycopg.connect(database_url, autocommit=True) as conn:

        def worker_of(key: str) -> str:
            return _worker(*conn.execute(_WORKER_OF, (key,)).fetchone())  # type: ignore[misc]

        async with AsyncTestClient(app=app) as client:
            anon = Api(client)
            # The lobby: online tables, one host each, until both workers hold some.
            lobby: dict[str, str] = {}  # table id -> worker
            for i in range(16):
                host = await anon.guest(f"Host{i}")
                table = await host.create_table(seats=3)
                lobby[table["table_id"]] = worker_of(table["table_id"])
                if len(set(lobby.values())) == 2 and len(lobby) >= 4:
                    break
            # My games and the history: one person's solo tables and finished games on both.
            me = await anon.guest("Hist")
            me_id = (await client.get("/me", headers=me.headers)).json()["player_id"]
            seated: dict[str, str] = {}  # table id -> worker
            played: dict[str, str] = {}  # finished game id -> worker
            for _ in range(12):
                table = await me.solo_table(2)
                worker = worker_of(table["table_id"])
                await me.play_to_the_end(table["game"]["game_id"])
                played[table["game"]["game_id"]] = worker
                if worker in seated.values():  # one open table a worker is enough (5 at most)
                    await me.ok_table_action(table["table_id"], "leave")
                else:
                    seated[table["table_id"]] = worker
                if len(set(played.values())) == 2:
                    break
            assert len(set(lobby.values())) == 2 and len(set(played.values())) == 2, (
                lobby,
                played,
            )
            # The worker to lose: not the one with the person's own record (their history's
            # rating changes are read from it: that one away, the history answers 503).
            lost = "1" if worker_of(me_id) == "2" else "2"

            async def reads(label: str, away: str | None, bound: float = KNOWN) -> None:
                """Each read once; with a worker away, partial (its rows only) or 503."""
                page, took = await _timed(client.get("/tables?limit=100", headers=me.headers))
                assert page.status_code == 200, page.text
                listed = {t["table_id"] for t in page.json()["tables"]} & set(lobby)
                mine, took_mine = await _timed(client.get("/me/games", headers=me.headers))
                history, took_history = await _timed(
                    client.get("/me/history?limit=100", headers=me.headers)
                )
                board, took_board = await _timed(client.get("/leaderboard", headers=me.headers))
                assert mine.status_code == 200 and history.status_code == 200, (mine, history)
                sits = {t["table_id"] for t in mine.json()["tables"]}
                games = {g["game_id"] for g in history.json()["games"]}
                partial = (
                    page.json()["partial"],
                    mine.json()["partial"],
                    history.json()["partial"],
                )
                if away is None:
                    assert partial == (False, False, False), label
                    assert listed == set(lobby) and sits == set(seated), label
                    assert games == set(played) and board.status_code == 200, label
                else:
                    assert partial == (True, True, True), label
                    assert listed == {t for t, w in lobby.items() if w != away}, label
                    assert sits == {t for t, w in seated.items() if w != away}, label
                    assert games == {g for g, w in played.items() if w != away}, label
                    assert board.status_code == 503, board.text
                    assert board.json()["code"] == "database-unavailable", board.text
                    assert board.json()["retryable"] is True
                    for name, seconds in (
                        ("lobby", took),
                        ("my_games", took_mine),
                        ("history", took_history),
                        ("leaderboard_503", took_board),
                    ):
                        assert seconds < bound, (label, name, seconds)
                        key = f"{label}_{name}_max_s"
                        figures[key] = max(figures.get(key, 0.0), seconds)

            async def sign_up_refused(label: str) -> None:
                """A sign-up writes a token on every node (a reference table): refused, 503."""
                answer, took = await _timed(client.post("/guests", json={"name": "Late"}))
                assert answer.status_code == 503, answer.text
                assert answer.json()["code"] == "database-unavailable", answer.text
                figures[f"{label}_sign_up_503_s"] = took

            async def until_whole(label: str) -> None:
                started = time.monotonic()
                while True:
                    page = await client.get("/tables?limit=100", headers=me.headers)
                    if page.status_code == 200 and not page.json()["partial"]:
                        break
                    assert time.monotonic() - started < 60, f"{label}: still partial"
                    await asyncio.sleep(0.25)
                figures[f"{label}_whole_after_s"] = round(time.monotonic() - started, 2)
                await reads(label, None)

            await reads("before", None)
            cluster("kill", lost)
            try:
                figures["killed_old_path_fails_after_s"] = await _old_path(pool)
                await reads("killed_first", lost, FIRST)  # finds the worker away
                for _ in range(2):
                    await reads("killed", lost)  # know it
                await sign_up_refused("killed")
            finally:
                cluster("start", lost)
            await until_whole("restarted")

            if citus_env.get("SWARM_CITUS_MODE") == "netns":
                cluster("cut", lost)
                try:
                    figures["cut_old_path_fails_after_s"] = await _old_path(pool)
                    await reads("cut_first", lost, FIRST)
                    for _ in range(2):
                        await reads("cut", lost)
                    await sign_up_refused("cut")
                finally:
                    cluster("heal", lost)
                await until_whole("healed")

    summary(
        "citus_partial_reads",
        lobby_tables=len(lobby),
        my_tables=len(seated),
        finished_games=len(played),
        **figures,
    )
    if citus_env.get("SWARM_CITUS_MODE") != "netns":
        pytest.skip("the cut half needs network namespaces (root): only the crash ran")
