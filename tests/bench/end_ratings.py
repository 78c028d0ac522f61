"""What showing each person's rating change costs the end of a game (issue 43):
``python -m tests.bench.end_ratings [--history 1,50,250] [--rounds 5] [--calls 40]``.

An ended rated game's view (`getGame`, and `listGameSteps` for the replay) carries each rated
person's change (`usecases.ratings.seat_ratings`): it reads the table, which people have
accounts, and each change by the version its delivery's command produced (two short reads a
person). Before, it read each person's whole `player-<id>` stream and scanned it, a cost that
grows with their history ("whole streams", timed here too). Baseline, in the same run: the
rest of the ended game's view (`Play._view` without the ratings: the game, its view, what it
paid, from the table's log and the outbox), the one getGame pays anyway.

Four accounts play one rated 4-seat game through the use cases on a fresh PostgreSQL
database (the embedded one, or ``--database-url`` / ``DATABASE_URL``), dropped afterwards.
Then, for each history level, each person's stream is padded to that many earlier rated games
(a `game_recorded` and a `rating_changed` each, copies of the real game's under other game
ids); the three are timed in interleaved slices of ``--calls`` calls, the order turning each
round. Per level: ms a call of each (median, min–max over the rounds) and each one's ratio to
the baseline, round by round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from service.bootstrap import Swarm, bootstrap
from service.domain.players import rating_changes
from service.domain.ratings import RatingChanged
from service.domain.views import game_view
from service.store.database import drop_database, ensure_database, provide_database_url
from service.store.log import NewEvent, StreamAppend
from service.store.migrate import migrate
from service.store.pool import open_pool
from service.store.postgres import postgres_ports
from service.usecases import ratings as ratings_module
from service.usecases.context import Context, stream
from service.usecases.ratings import seat_ratings
from tests.bench.bench import say, spread
from tests.bench.rated_players import Person, play_game
from tests.in_memory import FAST_HASHER, account


async def _pad(swarm: Swarm, player_id: str, game_id: str, games: int) -> None:
    """Pad the person's stream to `games` rated games before this one's lookup: copies of the
    real game's `game_recorded` and `rating_changed`, each under a new game id."""
    rows = await swarm.ctx.store.read_stream(stream("player", player_id))
    have = sum(r.type == "rating_changed" for r in rows)
    copies = [next(r for r in rows if r.type == t) for t in ("game_recorded", "rating_changed")]
    version = rows[-1].version
    while have < games:
        batch = []
        for _ in range(min(50, games - have)):
            fake = str(uuid.uuid4()).encode()
            batch += [NewEvent(r.type, r.data.replace(game_id.encode(), fake)) for r in copies]
            have += 1
        await swarm.ctx.store.append(
            StreamAppend(stream("player", player_id), version, batch),
            metadata={"actor": "bench", "causation": "pad"},
        )
        version += len(batch)


async def _from_the_whole_stream(
    ctx: Context, player_id: str, game_id: str
) -> RatingChanged | None:
    """How `seat_ratings` found a change before: the person's whole stream, scanned."""
    rows = await ctx.store.read_stream(stream("player", player_id))
    changes = rating_changes((r.version, r.type, r.data) for r in rows)
    return next((c for _, c in changes if c.game_id == game_id), None)


async def _timed(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    """ms a call, over `calls` calls one after another."""
    started = time.perf_counter()
    for _ in range(calls):
        await call()
    return 1000 * (time.perf_counter() - started) / calls


async def run(args: argparse.Namespace) -> dict[str, Any]:
    base = provide_database_url(args.database_url or os.environ.get("DATABASE_URL"))
    name = f"swarm_bench_{uuid.uuid4().hex[:12]}"
    url = ensure_database(base, name)
    levels: dict[str, Any] = {}
    try:
        migrate(url)
        pool = await open_pool(url, min_size=1, max_size=4)
        try:
            swarm = bootstrap(postgres_ports(pool), hasher=FAST_HASHER, accounts_per_hour=0)
            people = [Person(await account(swarm, f"End{i}"), "weak") for i in range(4)]
            await play_game(swarm, people, random.Random(43))
            first = stream("player", people[0].player.player_id)
            rows = await swarm.ctx.store.read_stream(first)
            [(_, change)] = rating_changes((r.version, r.type, r.data) for r in rows)
            game_id = change.game_id
            game = await swarm.repository.game(game_id)
            shown = await seat_ratings(swarm.ctx, swarm.repository, game)
            assert shown and all(r.status == "delivered" for r in shown), shown

            async def ratings() -> Any:
                return await seat_ratings(swarm.ctx, swarm.repository, game)

            async def whole_streams() -> Any:  # seat_ratings as it found each change before
                found = ratings_module._change_of
                ratings_module._change_of = _from_the_whole_stream
                try:
                    return await seat_ratings(swarm.ctx, swarm.repository, game)
                finally:
                    ratings_module._change_of = found

            async def baseline() -> Any:  # the rest of the ended game's view, as getGame
                state = await swarm.repository.game(game_id)
                view = game_view(state, 1, swarm.ctx.clock())
                return view, await swarm.money.paid(state, 1)

            for history in args.history:
                for person in people:
                    await _pad(swarm, person.player.player_id, game_id, max(history, 1))
                calls = {"ratings": ratings, "whole": whole_streams, "baseline": baseline}
                for call in calls.values():
                    await call()  # warm up: caches, the pool's prepared statements
                slices: dict[str, list[float]] = {name: [] for name in calls}
                names = list(calls)
                for r in range(args.rounds):
                    for which in names[r % 3 :] + names[: r % 3]:  # the order turns
                        slices[which].append(await _timed(calls[which], args.calls))
                    say(f"history {history}: round {r + 1}/{args.rounds}")

                def over_baseline(name: str, got: dict[str, list[float]]) -> dict[str, float]:
                    pairs = zip(got[name], got["baseline"], strict=True)
                    return spread([a / b for a, b in pairs])

                levels[str(history)] = {
                    "ms_ratings": spread(slices["ratings"]),
                    "ms_whole_streams": spread(slices["whole"]),
                    "ms_baseline": spread(slices["baseline"]),
                    "ratings_over_baseline": over_baseline("ratings", slices),
                    "whole_streams_over_baseline": over_baseline("whole", slices),
                }
        finally:
            await pool.close()
    finally:
        drop_database(base, name)
    return {
        "settings": vars(args) | {"json": str(args.json)},
        "load": os.getloadavg(),
        "levels": levels,
    }


def _cell(s: dict[str, float], digits: int = 2) -> str:
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--history",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 50, 250],
        help="earlier rated games on each person's stream, comma-separated levels",
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=40, help="calls a slice")
    parser.add_argument("--database-url")
    parser.add_argument("--json", type=Path, default=Path("bench-end-ratings.json"))
    args = parser.parse_args()
    load = os.getloadavg()
    result = asyncio.run(run(args))
    args.json.write_text(json.dumps(result, indent=2))
    print(f"\n4 people, a rated 4-seat game (load {load} → {result['load']})")
    print(
        "| rated games on each stream | ratings, ms | whole streams, ms | rest of the view, ms "
        "| ratings ÷ rest | whole streams ÷ rest |"
    )
    print("|---|---|---|---|---|---|")
    for history, f in result["levels"].items():
        print(
            f"| {history} | {_cell(f['ms_ratings'])} | {_cell(f['ms_whole_streams'])} "
            f"| {_cell(f['ms_baseline'])} | {_cell(f['ratings_over_baseline'])} "
            f"| {_cell(f['whole_streams_over_baseline'])} |"
        )


if __name__ == "__main__":
    main()
