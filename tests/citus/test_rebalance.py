"""Growing while playing (issue 46): a third worker added and the shards rebalanced onto it
(`citus_rebalance_start`, moves by logical replication) while solo games play through the API.
No acknowledged move is lost, no chain forks (every game's chain verifies, versions have no
gap), and the answered moves' p99 during the rebalance is reported.

Online games with a 1 s turn clock (tests/citus/online.py) play all the while, two on each of
the first two workers, the app's clock thread firing their turns: their moves are not lost, no
turn is revealed twice, and the clock fires on both workers' games while the shards move."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.store.events import EventStore
from tests.citus import online
from tests.citus.conftest import cluster
from tests.citus.test_faults_across_hosts import _move
from tests.e2e.api_client import Api
from tests.faults.conftest import summary

_STATE = "select state from citus_rebalance_status() order by job_id desc limit 1"


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


async def test_shards_move_to_a_new_worker_while_games_play(
    database_url: str,
    citus_env: dict[str, str],
    event_store: EventStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_METRICS", "0")
    app = create_app(database_url)  # its clock thread fires the online games' turns
    tally = online.Tally()
    acked: dict[str, int] = {}
    answered: list[float] = []
    refused: list[int] = []
    done = asyncio.Event()
    async with AsyncTestClient(app=app) as client:
        anon = Api(client)
        games: list[tuple[Api, str]] = []
        window: list[float] = []  # when the rebalance started (monotonic)

        async def play(player: Api) -> None:
            table = await player.solo_table(4)  # three bees: more turns to play
            game_id = table["game"]["game_id"]
            games.append((player, game_id))
            while not done.is_set():
                status, seconds, body = await _move(player, game_id)
                if status == 200:
                    if len(window) == 1:  # answered while the shards were moving
                        answered.append(seconds)
                    acked[game_id] = max(acked.get(game_id, 0), body["version"])
                    if body.get("phase") == "ended":  # play again at the same table
                        again = await player.table_action(table["table_id"], "games")
                        if again.status_code not in (200, 201):
                            return
                        game_id = again.json()["game"]["game_id"]
                        games.append((player, game_id))
                    await asyncio.sleep(0.25)  # a person's pace: the moves must not starve
                else:  # the shard moves' catch-up on two cores
                    refused.append(status)
                    await asyncio.sleep(0.2)

        people = [await anon.guest(f"Grow{i}") for i in range(8)]
        onlines = await online.open_games(anon, database_url, per_worker=2)
        players = [asyncio.create_task(play(p)) for p in people]
        async with online.playing(onlines, tally):
            try:
                await asyncio.sleep(1)
                moving = online.now()
                cluster("add-worker", "3", database_url.rsplit("/", 1)[1])
                started = time.monotonic()
                window.append(started)
                with psycopg.connect(database_url, autocommit=True) as conn:
                    conn.execute("select citus_rebalance_start()")
                    while True:
                        row = conn.execute(_STATE).fetchone()
                        if row is not None and row[0] in ("finished", "failed", "cancelled"):
                            break
                        await asyncio.sleep(0.5)
                        assert time.monotonic() - started < 300, "rebalance still running"
                    state = row[0]
                    on_new = conn.execute(
                        "select count(*) from citus_shards where nodeport = 5432"
                        " and nodename like '%.13' or nodeport = 57403"
                    ).fetchone()
                seconds = time.monotonic() - started
                window.append(started + seconds)
                moved = online.now()
                during = len(answered)
                await asyncio.sleep(1)
            finally:
                done.set()
                await asyncio.gather(*players)
    assert state == "finished", state
    assert on_new is not None and on_new[0] > 0, "no shard moved to the new worker"
    lost = 0
    for _, gid in games:
        events = await event_store.read_stream(f"game-{gid}")
        assert [e.version for e in events] == list(range(1, len(events) + 1))  # no gap, no fork
        lost += len(events) < acked.get(gid, 0)
        verdict = await event_store.verify_stream(f"game-{gid}")
        assert verdict.ok, (gid, verdict)
    assert lost == 0
    assert during > 0, "no move was answered while the shards moved"
    played = await online.check(event_store, onlines, tally, {"during": (moving, moved)})
    clocked = tally.answered(window[0], window[1])
    summary(
        "citus_rebalance",
        games=len(games),
        rebalance_s=round(seconds, 1),
        shard_placements_on_new_worker=on_new[0],
        moves_answered_during=during,
        moves_refused=len(refused),
        answered_p99_s=round(_p99(answered), 3),
        answered_max_s=round(max(answered), 3),
        lost=lost,
        chains_verified=len(games),
        **played,
        online_answered_during=len(clocked),
        online_answered_p99_s=round(online.p99(clocked), 3),
    )
    # The clock fired on both first workers' games while their shards moved.
    assert all(played[f"clocks_fired_during@{g.host}"] > 0 for g in onlines), played
