"""Online games with the turn clock running, for the Citus tier (issue 46): two-seat tables with
a 1 s turn clock, where one person confirms a bee each turn (and takes the cheapest stem when
asked) and the other never moves, so that every turn needs the app's clock thread: it plays the
silent seat's lowest bee when the turn runs out. A game that ends is played again at its table.

The fault and rebalance tests play them while a worker is lost or shards move, and check them
afterwards from the events: every acknowledged move is in its game's stream (none lost), the
versions have no gap, every chain verifies, no turn is revealed twice, and how many clock
firings (distinct `clock:<deadline>` commands) each game's stream holds, by window of time."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import msgspec
import psycopg

from service.store.events import EventStore
from tests.e2e.api_client import Api

CLOCK = {"turn_seconds": 1, "choice_seconds": 1}
WORKER_OF = """
select n.nodename || ':' || n.nodeport from pg_dist_placement p join pg_dist_node n using (groupid)
 where p.shardid = get_shard_id_for_distribution_column('events', %s::text)
"""


def worker_of(database_url: str, key: str) -> str:
    """The worker holding ``key``'s shard (a table's id: its games' too), as host:port."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(WORKER_OF, (key,)).fetchone()
    assert row is not None, key
    return str(row[0])


@dataclass
class OnlineGame:
    mover: Api
    silent: Api
    table_id: str
    host: str  # the worker holding the table's shard (and so its games')
    games: list[str] = field(default_factory=list)

    @property
    def game_id(self) -> str:
        return self.games[-1]


@dataclass
class Tally:
    acked: dict[str, int] = field(default_factory=dict)  # game id -> last acknowledged version
    # (monotonic time answered, seconds, status, worker) of every move sent
    moves: list[tuple[float, float, int, str]] = field(default_factory=list)
    played_again: int = 0

    def answered(self, since: float, until: float, host: str | None = None) -> list[float]:
        return [
            s
            for at, s, status, h in self.moves
            if status == 200 and since <= at <= until and host in (None, h)
        ]

    def statuses(self, since: float, until: float, host: str | None = None) -> Counter[int]:
        return Counter(
            status for at, _, status, h in self.moves if since <= at <= until and host in (None, h)
        )


async def open_games(anon: Api, database_url: str, per_worker: int) -> list[OnlineGame]:
    """``per_worker`` games on each of the cluster's workers (tables opened until each worker
    holds that many; the others are left, which closes them)."""
    made: list[OnlineGame] = []
    hosts: Counter[str] = Counter()
    for n in range(per_worker * 12):
        mover = await anon.guest(f"Clock{n}")
        table = await mover.create_table(seats=2, **CLOCK)
        host = worker_of(database_url, table["table_id"])
        if hosts[host] >= per_worker:
            await mover.ok_table_action(table["table_id"], "leave")
            if len(hosts) >= 2 and all(c >= per_worker for c in hosts.values()):
                break
            continue
        hosts[host] += 1
        silent = await anon.guest(f"Silent{n}")
        joined = await silent.ok_table_action(table["table_id"], "seats")  # full: it starts
        made.append(OnlineGame(mover, silent, table["table_id"], host, [joined["game"]["game_id"]]))
        if len(hosts) >= 2 and all(c >= per_worker for c in hosts.values()):
            break
    assert len(hosts) == 2 and min(hosts.values()) == per_worker, hosts
    return made


async def play(game: OnlineGame, tally: Tally, stop: asyncio.Event) -> None:
    """The mover's loop until ``stop``: confirm the lowest bee, take the cheapest stem, play
    again when the game has ended; a refused answer (a lost worker: 503) is retried."""
    api = game.mover
    while not stop.is_set():
        started = time.monotonic()
        response = await api.client.get(f"/games/{game.game_id}", headers=api.headers)
        if response.status_code != 200:
            tally.moves.append((time.monotonic(), time.monotonic() - started, 0, game.host))
            await asyncio.sleep(0.5)
            continue
        view = response.json()
        move: dict[str, Any] | None = None
        if view["phase"] == "ended":
            again = await api.table_action(game.table_id, "games")
            if again.status_code in (200, 201):
                game.games.append(again.json()["game"]["game_id"])
                tally.played_again += 1
            else:
                await asyncio.sleep(0.5)
            continue
        if view["phase"] == "choosing" and view["choice"]["yours"]:
            move = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
        elif view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
            move = {"type": "confirm", "bee": view["hand"][0]}
        if move is None:  # waiting for the silent seat: the clock
            await asyncio.sleep(0.2)
            continue
        started = time.monotonic()
        answer = await api.move(game.game_id, **move)
        tally.moves.append(
            (time.monotonic(), time.monotonic() - started, answer.status_code, game.host)
        )
        if answer.status_code == 200:
            gid = game.game_id
            tally.acked[gid] = max(tally.acked.get(gid, 0), answer.json()["version"])
        else:
            await asyncio.sleep(0.5)


async def check(
    event_store: EventStore,
    games: list[OnlineGame],
    tally: Tally,
    windows: dict[str, tuple[datetime, datetime]] | None = None,
) -> dict[str, Any]:
    """Every game's stream against what was acknowledged; the figures. Raises on a lost move,
    a gap, a chain that does not verify or a turn revealed twice."""
    lost = revealed_twice = chains = fired = 0
    fired_in: Counter[str] = Counter()
    for game in games:
        for gid in game.games:
            events = await event_store.read_stream(f"game-{gid}")
            assert [e.version for e in events] == list(range(1, len(events) + 1)), gid
            lost += len(events) < tally.acked.get(gid, 0)
            verdict = await event_store.verify_stream(f"game-{gid}")
            assert verdict.ok, (gid, verdict)
            chains += 1
            turns = Counter(
                msgspec.json.decode(e.data)["turn"] for e in events if e.type == "picks_revealed"
            )
            revealed_twice += sum(1 for n in turns.values() if n > 1)
            firings: dict[str, datetime] = {}
            for e in events:
                if e.metadata.get("actor") == "clock":
                    firings.setdefault(str(e.metadata.get("command_id")), e.recorded_at)
            fired += len(firings)
            for label, (since, until) in (windows or {}).items():
                fired_in[f"{label}@{game.host}"] += sum(
                    1 for at in firings.values() if since <= at <= until
                )
    assert lost == 0, f"{lost} acknowledged moves lost"
    assert revealed_twice == 0, f"{revealed_twice} turns revealed twice"
    return {
        "online_games": sum(len(g.games) for g in games),
        "online_moves_acked": sum(1 for m in tally.moves if m[2] == 200),
        "online_lost": lost,
        "online_chains_verified": chains,
        "turns_revealed_twice": revealed_twice,
        "clocks_fired": fired,
        **{f"clocks_fired_{k}": v for k, v in sorted(fired_in.items())},
    }


@asynccontextmanager
async def playing(games: list[OnlineGame], tally: Tally) -> AsyncIterator[None]:
    """The games played (`play`) in the background while the block runs; stopped as it ends,
    however it ends."""
    stop = asyncio.Event()
    tasks = [asyncio.create_task(play(g, tally, stop)) for g in games]
    try:
        yield
    finally:
        stop.set()
        await asyncio.gather(*tasks)


def now() -> datetime:
    return datetime.now(UTC)


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0
