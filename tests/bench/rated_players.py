"""Ratings from many rated games (issue 43's closing check): people of three hidden strengths
play rated online tables through the service's own use cases, and then every rating is
recomputed from the log (`usecases.ratings.recompute`, what `swarm ratings` runs) and the
ratings must order the strengths.

    python -m tests.bench.rated_players --games 200            # in memory (seconds)
    python -m tests.bench.rated_players --games 200 --database postgresql://...

The people are accounts; each decides at its seat from what the seat may see (`BeeView`), with
one of three policies it never tells the service: `weak` plays a random bee of its hand,
`fair` the easy bee level's choice, `strong` the medium level's. A too-low bee takes the
cheapest stem. Tables of 2 to 6 seats are drawn from everyone, at random (a seeded RNG), so
every strength meets the others in fields of every size.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from service.api.moves import ChooseStem, Confirm, person_move
from service.bootstrap import Swarm, bootstrap
from service.domain.ratings import Rating
from service.domain.rules.bees import choose, view_for
from service.domain.rules.events import ClockSettings
from service.domain.rules.state import GameState
from service.domain.views import game_view
from service.usecases.identity import Player
from service.usecases.ratings import RatingsCheck, recompute
from tests.in_memory import FAST_HASHER, account, swarm_in_memory

CLOCK = ClockSettings(turn_seconds=600, choice_seconds=600)
STRENGTHS = ("weak", "fair", "strong")
Policy = Callable[[GameState, int, random.Random], int]


def _weak(state: GameState, seat: int, rng: random.Random) -> int:
    return rng.choice(state.seat(seat).hand)


def _fair(state: GameState, seat: int, rng: random.Random) -> int:
    return choose(view_for(state, seat), "easy")


def _strong(state: GameState, seat: int, rng: random.Random) -> int:
    return choose(view_for(state, seat), "medium", rng.randbytes(32))


POLICIES: dict[str, Policy] = {"weak": _weak, "fair": _fair, "strong": _strong}


@dataclass
class Person:
    player: Player
    strength: str


@dataclass
class Outcome:
    games: int
    seconds: float
    check: RatingsCheck
    ratings: dict[str, list[Rating]] = field(default_factory=dict)  # by strength

    @property
    def ordered(self) -> bool:
        means = [statistics.mean(r.mu for r in self.ratings[s]) for s in STRENGTHS]
        return means == sorted(means)


async def play_game(swarm: Swarm, people: list[Person], rng: random.Random) -> None:
    host, *others = people
    table = (await swarm.tables.create_table(host.player, len(people), 0, CLOCK, rated=True)).table
    seen = None
    for person in others:
        seen = await swarm.tables.join_table(person.player, table.table_id, None)
    assert seen is not None and seen.game is not None
    game_id = seen.game.game_id
    by_seat = {n: p for n, p in enumerate(people, 1)}
    for _ in range(1000):
        state = await swarm.repository.game(game_id)
        if state.phase == "ended":  # everyone leaves: the table closes (hosts have a cap)
            for person in people:
                await swarm.tables.leave_table(person.player, table.table_id)
            return
        if state.phase == "choosing" and state.pending is not None:
            seat = state.pending.seat
            view = game_view(state, seat, swarm.ctx.clock())
            assert view.choice is not None
            move: Any = ChooseStem(stem=view.choice.cheapest, move_id=uuid.uuid4().hex)
            await swarm.play.submit_move(by_seat[seat].player, game_id, person_move(move))
            continue
        for seat, person in by_seat.items():
            if state.phase != "picking" or state.seat(seat).confirmed is not None:
                continue
            bee = POLICIES[person.strength](state, seat, rng)
            move = Confirm(bee=bee, move_id=uuid.uuid4().hex)
            await swarm.play.submit_move(person.player, game_id, person_move(move))
            state = await swarm.repository.game(game_id)
    raise AssertionError(f"game {game_id} did not end")


async def run(swarm: Swarm, games: int, per_strength: int, seed: int) -> Outcome:
    rng = random.Random(seed)
    people = [
        Person(await account(swarm, f"{s[:2]}{i}"), s)
        for s in STRENGTHS
        for i in range(per_strength)
    ]
    started = time.perf_counter()
    for _ in range(games):
        seats = rng.randint(2, min(6, len(people)))
        await play_game(swarm, rng.sample(people, seats), rng)
    seconds = time.perf_counter() - started
    check = await recompute(swarm.ctx, swarm.repository)
    outcome = Outcome(games=games, seconds=seconds, check=check)
    for person in people:
        record = await swarm.repository.player_record(person.player.player_id)
        outcome.ratings.setdefault(person.strength, []).append(record.rating)
    return outcome


async def on_postgres(url: str, games: int, per_strength: int, seed: int) -> Outcome:
    from service.store.migrate import migrate
    from service.store.pool import open_pool
    from service.store.postgres import postgres_ports

    migrate(url)
    pool = await open_pool(url, min_size=1, max_size=4)
    try:
        swarm = bootstrap(postgres_ports(pool), hasher=FAST_HASHER, accounts_per_hour=0)
        return await run(swarm, games, per_strength, seed)
    finally:
        await pool.close()


def report(outcome: Outcome) -> str:
    lines = [
        f"{outcome.games} rated games in {outcome.seconds:.1f} s; recomputed from the log: "
        f"{outcome.check.people} people, {outcome.check.changes} changes, "
        f"{outcome.check.games} games, {len(outcome.check.mismatches)} mismatches",
    ]
    for strength in STRENGTHS:
        rated = outcome.ratings[strength]
        points = sorted((r.points for r in rated), reverse=True)
        mean = statistics.mean(r.points for r in rated)
        lines.append(
            f"  {strength:>6}: mean {mean:7.1f} points, each {points}, "
            f"games {sum(r.games for r in rated)}, provisional "
            f"{sum(r.provisional for r in rated)} of {len(rated)}"
        )
    lines.append(f"ratings order the strengths: {'yes' if outcome.ordered else 'NO'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--people", type=int, default=4, help="people of each strength")
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--database", help="a PostgreSQL URL (default: the in-memory store)")
    args = parser.parse_args(argv)
    if args.database:
        outcome = asyncio.run(on_postgres(args.database, args.games, args.people, args.seed))
    else:
        swarm = swarm_in_memory(accounts_per_hour=0)
        outcome = asyncio.run(run(swarm, args.games, args.people, args.seed))
    print(report(outcome))
    return 0 if outcome.ordered and not outcome.check.mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
