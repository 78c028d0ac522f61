"""Two levels head to head in the published 6-nimmt format: alternate seats, duplicate deals.

    python -m tests.bench.duplicate --games 150 expert mcs

The format konaito/nimmt used for its self-play network against rl-6-nimmt's MCS and
Alpha0.5 players (issue 45 quotes its "about 62% of deals"): four seats A, B, A, B, and every
deal played twice, the second time with the seats swapped (B, A, B, A), so both sides hold
every hand. Per game, the gap is A's seats' mean stings less B's; a game is A's when the gap is
below 0 (a tie counts half). It prints A's share of the games, the mean gap with its 95%
bootstrap interval (deals resampled, each deal's two games together) and each side's CPU a
decision. Deals are `make bench-bees`' (`random.Random("deal/4/{n}")`), seeds the service's.
One process per `--jobs` worker.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from service.domain.rules.bees import BEE_NAMES
from service.domain.rules.engine import cheapest_stem
from service.domain.rules.events import SeatInfo
from service.domain.rules.levels import LEVELS
from service.domain.rules.simulate import Policy, play_game
from tests.bench import bees


def seats_of(line_up: list[str]) -> tuple[SeatInfo, ...]:
    """The seats as a view shows them (`bees.seated`: a service level as its bee, MCS(100) or
    random as a person)."""
    return tuple(
        SeatInfo(seat=n, name=BEE_NAMES[(n - 1) % len(BEE_NAMES)], kind="bee", level=who)
        if who in LEVELS
        else SeatInfo(seat=n, name=f"Player {n}", kind="person", player_id=f"bench-{n}")
        for n, who in enumerate(line_up, start=1)
    )


def play_deal(a: str, b: str, number: int) -> dict[str, Any]:
    """Deal `number` at 4 seats, played as A, B, A, B and as B, A, B, A."""
    gaps = []
    cpu: dict[str, list[float]] = {a: [], b: []}
    for swapped in (False, True):
        line_up = [b, a, b, a] if swapped else [a, b, a, b]
        game_id = f"bench-4-{number}-{'ba' if swapped else 'ab'}"
        timed = {who: bees.Timed(who, game_id) for who in (a, b)}
        policies: list[Policy] = [timed[who] for who in line_up]
        state, _ = play_game(
            seats_of(line_up),
            policies,
            random.Random(f"deal/4/{number}"),
            lambda state, seat: cheapest_stem(state.stems),
        )
        stings = [s.stings for s in state.seats]
        side_a = [x for x, who in zip(stings, line_up, strict=True) if who == a]
        side_b = [x for x, who in zip(stings, line_up, strict=True) if who == b]
        gaps.append(statistics.fmean(side_a) - statistics.fmean(side_b))
        for who in (a, b):
            cpu[who].extend(timed[who].cpu_ms)
    return {"gaps": gaps, "cpu": cpu}


def _play_star(args: tuple[str, str, int]) -> dict[str, Any]:
    return play_deal(*args)


def summary(a: str, b: str, deals: list[dict[str, Any]]) -> dict[str, Any]:
    games = [g for d in deals for g in d["gaps"]]
    won = [1.0 if g < 0 else 0.5 if g == 0 else 0.0 for g in games]
    per_deal = [statistics.fmean(d["gaps"]) for d in deals]
    won_per_deal = [statistics.fmean(won[2 * i : 2 * i + 2]) for i in range(len(deals))]
    return {
        "run": f"{bees.LABEL[a]}, {bees.LABEL[b]}, {bees.LABEL[a]}, {bees.LABEL[b]}, both seatings",
        "deals": len(deals),
        "games": len(games),
        "a_games_share": round(statistics.fmean(won), 4),
        "a_games_share_ci95": [round(x, 4) for x in bees.bootstrap(won_per_deal)],
        "gap": round(statistics.fmean(per_deal), 3),
        "gap_ci95": [round(x, 3) for x in bees.bootstrap(per_deal)],
        "cpu_ms": {
            who: bees.cpu_summary([ms for d in deals for ms in d["cpu"][who]]) for who in (a, b)
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--games", type=int, default=150, help="deals, each played twice")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    tasks = [(args.a, args.b, n) for n in range(args.first, args.first + args.games)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        deals = list(pool.map(_play_star, tasks, chunksize=max(1, args.games // 16)))
    result = summary(args.a, args.b, deals)
    print(
        f"{result['run']}: {result['deals']} deals, {result['games']} games; "
        f"{bees.LABEL[args.a]} ahead in {100 * result['a_games_share']:.1f}% "
        f"[{100 * result['a_games_share_ci95'][0]:.1f}, "
        f"{100 * result['a_games_share_ci95'][1]:.1f}] of the games; stings a seat "
        f"{result['gap']:+.2f} [{result['gap_ci95'][0]:+.2f}, {result['gap_ci95'][1]:+.2f}]"
    )
    for who, cpu in result["cpu_ms"].items():
        print(f"  {bees.LABEL[who]}: CPU ms a decision median {cpu['median']} p99 {cpu['p99']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"summary": result, "deals": deals}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
