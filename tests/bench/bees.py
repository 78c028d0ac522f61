"""How strong the bee players are, and how long they think (docs/benchmarks.md, "Bee players").

    python -m tests.bench.bees            # the full run `make bench-bees` makes (~8 min)
    python -m tests.bench.bees --quick    # a few games of each, for a look (not for figures)

Runs, each over enough games that a win rate's 95% interval is narrower than ±5 points:
- one strong bee (seat 1) against three heuristic bees, 4 players;
- one strong bee against seven heuristic bees, 8 players;
- one heuristic bee against three random players, 4 players.
A win counts when the seat has the fewest stings, shared or not (seed §6: ties share the win).
The strong bee's seeds are derived as the service derives them (`bee_decision_seed`) from a
fixed bench server seed, so the whole run is reproducible. Decision times are measured around
each call, one process, on whatever else the machine is doing: the median and the p99.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from service.domain.rules.bees import BeeView, bee_decision_seed, choose_bee
from service.domain.rules.simulate import Policy, bee_seats, play_game, random_policy
from service.domain.rules.strong import choose_bee_strong

BENCH_SERVER_SEED = b"swarm-bench-bees"
Z95 = 1.959964


def wilson(wins: int, games: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate."""
    if games == 0:
        return (0.0, 1.0)
    p = wins / games
    denominator = 1 + Z95**2 / games
    centre = (p + Z95**2 / (2 * games)) / denominator
    half = Z95 * math.sqrt(p * (1 - p) / games + Z95**2 / (4 * games**2)) / denominator
    return (centre - half, centre + half)


def mean_interval(values: list[float]) -> dict[str, float]:
    mean = statistics.fmean(values)
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return {"mean": round(mean, 2), "ci95": round(half, 2)}


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[index]


class Timed:
    """A policy that records how long each decision takes, in milliseconds: wall time, and the
    process's CPU time (what the decision costs when it does not share the core)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.ms: list[float] = []
        self.cpu_ms: list[float] = []

    def __call__(self, view: BeeView) -> int:
        start, cpu = time.perf_counter(), time.process_time()
        bee = self.policy(view)
        self.cpu_ms.append((time.process_time() - cpu) * 1000)
        self.ms.append((time.perf_counter() - start) * 1000)
        return bee


def timings(timed: Timed) -> dict[str, float]:
    return {
        "median": round(statistics.median(timed.ms), 3),
        "p99": round(percentile(timed.ms, 99), 3),
        "cpu_median": round(statistics.median(timed.cpu_ms), 3),
        "cpu_p99": round(percentile(timed.cpu_ms, 99), 3),
        "decisions": len(timed.ms),
    }


def strong_policy(game: Callable[[], str]) -> Policy:
    """The strong bee with the seed the service would give it: (game, seat, turn, "pick").

    The view's hand size tells the turn (a bee plays one bee a turn from a hand of 10)."""

    def policy(view: BeeView) -> int:
        turn = 11 - len(view.hand)
        seed = bee_decision_seed(BENCH_SERVER_SEED, game(), view.seat, turn, "pick")
        return choose_bee_strong(view, seed)

    return policy


def run(name: str, players: int, games: int, first: str, others: str, seed: int) -> dict[str, Any]:
    """`games` games, seat 1 playing `first` and every other seat `others`."""
    rng = random.Random(seed)
    game_id = ["bench-0"]
    policies_of: dict[str, Policy] = {
        "strong": strong_policy(lambda: game_id[0]),
        "heuristic": choose_bee,
        "random": random_policy(rng),
    }
    first_policy = Timed(policies_of[first])
    other_policy = Timed(policies_of[others])
    policies: list[Policy] = [first_policy] + [other_policy] * (players - 1)
    wins = 0
    shares = 0.0
    first_stings: list[float] = []
    other_stings: list[float] = []
    started = time.perf_counter()
    for number in range(games):
        game_id[0] = f"bench-{name}-{number}"
        state, _ = play_game(bee_seats(players), policies, rng)
        stings = [s.stings for s in state.seats]
        if 1 in state.winners:
            wins += 1
            shares += 1 / len(state.winners)
        first_stings.append(stings[0])
        other_stings.append(statistics.fmean(stings[1:]))
    seconds = time.perf_counter() - started
    low, high = wilson(wins, games)
    return {
        "run": name,
        "players": players,
        "games": games,
        "seat1": first,
        "others": others,
        "wins": wins,
        "win_rate": round(wins / games, 4),
        "win_ci95": [round(low, 4), round(high, 4)],
        "win_share": round(shares / games, 4),  # a win shared by k seats counts 1/k
        "fair_share": round(1 / players, 4),
        "stings_seat1": mean_interval(first_stings),
        "stings_others": mean_interval(other_stings),
        "decision_ms_seat1": timings(first_policy),
        "decision_ms_others": timings(other_policy),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "seconds": round(seconds, 1),
    }


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def print_table(results: list[dict[str, Any]]) -> None:
    print(
        f"{'run':<24} {'games':>5} {'win (95% CI)':>22} {'share':>6} {'fair':>5} "
        f"{'stings seat 1':>14} {'stings others':>14}   seat 1 ms: median p99 (cpu median p99)"
    )
    for r in results:
        low, high = r["win_ci95"]
        win = f"{100 * r['win_rate']:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
        s1, so, t = r["stings_seat1"], r["stings_others"], r["decision_ms_seat1"]
        print(
            f"{r['run']:<24} {r['games']:>5} {win:>22} {100 * r['win_share']:>5.1f}% "
            f"{100 * r['fair_share']:>4.1f}% {s1['mean']:>8.2f} ±{s1['ci95']:<4.2f} "
            f"{so['mean']:>8.2f} ±{so['ci95']:<4.2f} "
            f"{t['median']:>8.2f} {t['p99']:>7.2f} ({t['cpu_median']:.2f} {t['cpu_p99']:.2f})"
        )
    loads = [r["load_average"][0] for r in results]
    print(f"load average (1 min) at the end of each run: {loads} on {os.cpu_count()} cores")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few games of each run")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--games4", type=int, default=400, help="games of strong vs heuristic, 4")
    parser.add_argument("--games8", type=int, default=300, help="games of strong vs heuristic, 8")
    parser.add_argument("--games-random", type=int, default=1000, help="heuristic vs random")
    args = parser.parse_args(argv)
    scale = 0.05 if args.quick else 1.0
    plan = [
        ("strong vs 3 heuristic", 4, args.games4, "strong", "heuristic", 16),
        ("strong vs 7 heuristic", 8, args.games8, "strong", "heuristic", 18),
        ("heuristic vs 3 random", 4, args.games_random, "heuristic", "random", 14),
    ]
    results = []
    for name, players, games, first, others, seed in plan:
        games = max(4, int(games * scale))
        say(f"bees: {name}, {games} games …")
        result = run(name, players, games, first, others, seed)
        say(f"  done in {result['seconds']} s")
        results.append(result)
    print_table(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
