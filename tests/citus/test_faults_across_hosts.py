"""Faults across hosts (issue 46): solo games through the API on the cluster, spread over both
workers' shards; one worker's PostgreSQL SIGKILLed, then (netns mode) the other's namespace cut
off the network. While a worker is away, the games on the other worker go on being answered,
the games on the lost one answer 503 `database-unavailable`; after the restart or the heal
those games go on; no acknowledged move is lost and every game's chain verifies.

Online games with a 1 s turn clock (tests/citus/online.py) play on both workers all the while,
the app's clock thread firing their turns: none of their acknowledged moves is lost, no turn
is revealed twice, their chains verify, and the clock goes on firing the turns of the games on
the worker that answers while the other is away.

The cluster is deploy/citus-cluster.sh's (worker N is node N); the summary line goes to
$TMPDIR/swarm-fault-summary.txt as the other fault tests' do."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from typing import Any

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.store.events import EventStore
from tests.citus import online
from tests.citus.conftest import cluster
from tests.e2e.api_client import Api
from tests.faults.conftest import summary

_WORKER_OF = """
select n.nodeid from pg_dist_placement p join pg_dist_node n using (groupid)
 where p.shardid = get_shard_id_for_distribution_column('events', %s::text)
"""
_NODES = """
select nodeid, nodename || ':' || nodeport from pg_dist_node where noderole = 'primary' and isactive
"""


async def _move(api: Api, game_id: str) -> tuple[int, float, dict[str, Any]]:
    """One move in a solo game (the lowest bee, or the cheapest stem): status, seconds, body."""
    started = time.monotonic()
    try:
        view = await api.game(game_id)
    except AssertionError:
        # The game's read failed (its worker away): the move as the player would send it.
        response = await api.move(game_id, type="confirm", bee=1)
        return response.status_code, time.monotonic() - started, response.json()
    if view["phase"] == "ended":
        return 200, time.monotonic() - started, view
    if view["phase"] == "choosing":
        response = await api.move(game_id, type="take_stem", stem=view["choice"]["cheapest"])
    else:
        response = await api.move(game_id, type="confirm", bee=view["hand"][0])
    return response.status_code, time.monotonic() - started, response.json()


async def _until_answered(api: Api, game_id: str, within: float) -> float:
    started = time.monotonic()
    while True:
        status, _, _ = await _move(api, game_id)
        if status == 200:
            return time.monotonic() - started
        assert time.monotonic() - started < within, f"{game_id} still {status} after {within}s"
        await asyncio.sleep(0.5)


async def test_a_lost_worker_stops_its_games_only_and_loses_nothing(
    database_url: str,
    citus_env: dict[str, str],
    event_store: EventStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_METRICS", "0")  # its gauge reads every shard's lobby rows
    app = create_app(database_url)  # its clock thread fires the online games' turns
    acked: dict[str, int] = {}  # each game's version after its last acknowledged move
    figures: dict[str, Any] = {}
    tally = online.Tally()
    windows: dict[str, tuple[Any, Any]] = {}
    async with AsyncTestClient(app=app) as client:
        games: list[tuple[Api, str, str]] = []  # (player, game id, table id)
        anon = Api(client)
        for i in range(10):
            player = await anon.guest(f"Fault{i}")
            table = await player.solo_table(2)
            games.append((player, table["game"]["game_id"], table["table_id"]))
        with psycopg.connect(database_url, autocommit=True) as conn:
            nodes: dict[int, str] = dict(conn.execute(_NODES).fetchall())
            node_of = {
                gid: nodes[conn.execute(_WORKER_OF, (tid,)).fetchone()[0]]  # type: ignore[index]
                for _, gid, tid in games
            }
        hosts = sorted(set(node_of.values()))
        assert len(hosts) == 2, f"the games are on one worker only: {node_of}"
        by_host: dict[str, list[tuple[Api, str]]] = defaultdict(list)
        for player, gid, _ in games:
            by_host[node_of[gid]].append((player, gid))
        # Worker N of the script is the N-th worker address (node N).
        first, second = hosts
        onlines = await online.open_games(anon, database_url, per_worker=2)
        async with online.playing(onlines, tally):
            begun = online.now()
            await asyncio.sleep(3)  # a few turns, the clock firing, before the faults
            windows["before"] = (begun, online.now())

            async def round_(label: str, away: str | None) -> None:
                for host, items in by_host.items():
                    for player, gid in items:
                        status, seconds, body = await _move(player, gid)
                        if host == away:
                            assert status == 503, (label, status, body)
                            assert body["code"] == "database-unavailable", body
                            figures.setdefault(f"{label}_503_max_s", 0.0)
                            figures[f"{label}_503_max_s"] = max(
                                figures[f"{label}_503_max_s"], round(seconds, 2)
                            )
                        else:
                            assert status == 200, (label, host, status, body)
                            acked[gid] = body["version"]
                            figures.setdefault(f"{label}_200_max_s", 0.0)
                            figures[f"{label}_200_max_s"] = max(
                                figures[f"{label}_200_max_s"], round(seconds, 2)
                            )

            await round_("before", None)

            # A crash: worker 1's PostgreSQL SIGKILLed.
            killed = "1" if first.endswith((".11:5432", ":57401")) else "2"
            lost = first if killed == "1" else second
            cluster("kill", killed)
            away = online.now()
            try:
                await round_("killed", lost)
                await asyncio.sleep(3)  # the online games on the other worker play on meanwhile
            finally:
                windows["killed"] = (away, online.now())
                cluster("start", killed)
            figures["restart_to_answer_s"] = round(
                await _until_answered(*by_host[lost][0], within=60), 2
            )
            await round_("restarted", None)

            # A partition: the other worker's namespace cut off the network.
            if citus_env.get("SWARM_CITUS_MODE") == "netns":
                other = "2" if killed == "1" else "1"
                cut = second if lost == first else first
                cluster("cut", other)
                away = online.now()
                try:
                    await round_("cut", cut)
                finally:
                    windows["cut"] = (away, online.now())
                    cluster("heal", other)
                figures["heal_to_answer_s"] = round(
                    await _until_answered(*by_host[cut][0], within=60), 2
                )
                await round_("healed", None)
            healed = online.now()
            # Every online game's clock fires again (a worker that did not answer a read of
            # the timers is asked again after `citus_reads.AWAY_FOR`, 5 s).
            await asyncio.sleep(7)
            windows["after"] = (healed, online.now())

    # Nothing acknowledged was lost, and every game's chain verifies.
    lost_moves = 0
    for _, gid, _ in games:
        version = await event_store.stream_version(f"game-{gid}")
        lost_moves += version < acked[gid]
        verdict = await event_store.verify_stream(f"game-{gid}")
        assert verdict.ok, (gid, verdict)
    assert lost_moves == 0
    played = await online.check(event_store, onlines, tally, windows)
    answered = tally.answered(0, float("inf"))
    summary(
        "citus_faults",
        games=len(games),
        per_worker=[len(v) for v in by_host.values()],
        acknowledged=len(acked),
        lost=lost_moves,
        chains_verified=len(games),
        **figures,
        **played,
        online_answered_p99_s=round(online.p99(answered), 3),
    )
    # While a worker is away the clock fires the turns of the other worker's games; after
    # the faults, on both workers' games again.
    live = {"killed": second if lost == first else first, "cut": lost}
    for label, host in live.items():
        if label in windows:
            assert played[f"clocks_fired_{label}@{host}"] > 0, (label, played)
    assert all(played[f"clocks_fired_after@{h}"] > 0 for h in hosts), played
    if citus_env.get("SWARM_CITUS_MODE") != "netns":
        pytest.skip("the partition half needs network namespaces (root): only the crash ran")
