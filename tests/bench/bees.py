"""How strong the bee levels are, and how long they think (docs/benchmarks.md, "Bee players").

    python -m tests.bench.bees                 # the whole table `make bench-bees` prints
    python -m tests.bench.bees --quick         # a few games of each, for a look (not for figures)
    python -m tests.bench.bees --only expert   # only the line-ups naming a level

Each line-up plays whole games through the engine (`simulate.play_game`), seat 1 at one level and
every other seat at another. The levels are the service's (easy, medium, hard, expert) and anchors
that are not: MCS(100), the plain Monte Carlo player of the 6-nimmt literature
(`tests/bench/mcs.py`, 100 playouts a bee), rl-6-nimmt's MCSAgent (`mcs-total`: 100 playouts a
decision, the anchor of issue 45's arena; `mcs-total-800` with 800), and random play. Game n of a
table size is dealt the same in every line-up (the deal comes from its own
`random.Random("deal/{players}/{n}")`), so line-ups differ only by who plays. A win is the fewest
stings, shared or not (seed §6); the win share counts a win shared by k seats as 1/k. Intervals are
95%, percentile bootstrap over the games (2,000 resamples, a fixed seed). Every seeded level gets
the seed the service would give it (`bee_decision_seed` of a fixed bench server seed, the game, the
seat and the turn), so the whole run is reproducible. A decision's CPU time (`time.process_time`,
one process per worker, so other work on the machine does not count) is measured around each call:
median and p99.

The games are spread over `--jobs` worker processes (2 by default): the whole plan is about 2,400 s
of CPU, some 20 minutes on an idle 2-core machine.
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
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

from service.domain.bee_answers import decide_with_bees
from service.domain.rules.bees import (
    BEE_NAMES,
    BeeView,
    bee_decision_seed,
    choose_bee,
    decision_seeds,
    view_for,
)
from service.domain.rules.commands import ConfirmPick, StartGame, TakeStem
from service.domain.rules.engine import cheapest_stem, initial_state
from service.domain.rules.events import BeeLevel, SeatInfo
from service.domain.rules.levels import LEVELS
from service.domain.rules.simulate import Policy, play_game, shuffled_deck
from tests.bench.mcs import choose_bee_mcs, choose_bee_mcs_total

BENCH_SERVER_SEED = b"swarm-bench-bees"
Z95 = 1.959964
RESAMPLES = 2000

Seeded = Callable[[BeeView, bytes], int]
SEEDED: dict[str, Seeded] = {
    **{name: level.policy for name, level in LEVELS.items()},  # easy, medium, hard, expert
    "mcs": choose_bee_mcs,
    "mcs-total": choose_bee_mcs_total,
    "mcs-total-800": partial(choose_bee_mcs_total, total=800),  # konaito/nimmt's opponent
    "random": lambda view, seed: random.Random(seed).choice(sorted(view.hand)),
}
LABEL: dict[str, str] = {
    **{name: name for name in LEVELS},
    "mcs": "MCS(100)",
    "mcs-total": "MCSAgent(mc_max=100)",
    "mcs-total-800": "MCSAgent(mc_max=800)",
    "random": "random",
}

# (seat 1, the others, players, games): the line-ups of issue 29 (medium was "strong", easy
# "heuristic"), then each level against MCS(100), the expert against each of the others and
# against the arena's anchor.
PLAN: tuple[tuple[str, str, int, int], ...] = (
    ("medium", "easy", 4, 300),
    ("medium", "mcs", 4, 200),
    ("easy", "mcs", 4, 200),
    ("mcs", "medium", 4, 100),
    ("medium", "easy", 8, 200),
    ("easy", "random", 4, 300),
    ("expert", "mcs", 4, 200),
    ("expert", "mcs", 8, 200),
    ("expert", "easy", 4, 200),
    ("expert", "medium", 4, 200),
    ("expert", "easy", 8, 100),
    ("mcs", "expert", 4, 50),
    ("hard", "mcs", 4, 200),
    ("hard", "medium", 4, 100),
    ("expert", "hard", 4, 100),
    # the hidden arena's anchor: rl-6-nimmt's MCSAgent(mc_max=100), 100 playouts a decision
    ("expert", "mcs-total", 4, 200),
    ("expert", "mcs-total", 8, 100),
)


def bootstrap(values: list[float], seed: int = 29) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of the mean of `values`."""
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(RESAMPLES))
    return means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[index]


class Timed:
    """A level as a `Policy` with the service's decision seed, recording each decision's CPU ms."""

    def __init__(self, level: str, game_id: str) -> None:
        self.decide = SEEDED[level]
        self.game_id = game_id
        self.cpu_ms: list[float] = []

    def __call__(self, view: BeeView) -> int:
        turn = 11 - len(view.hand)  # a hand of 10, one bee a turn
        seed = bee_decision_seed(BENCH_SERVER_SEED, self.game_id, view.seat, turn, "pick")
        cpu = time.process_time()
        bee = self.decide(view, seed)
        self.cpu_ms.append((time.process_time() - cpu) * 1000)
        return bee


def seated(first: str, others: str, players: int) -> tuple[SeatInfo, ...]:
    """The seats of a line-up as a view shows them: a service level as a bee of that level, an
    anchor (MCS(100), random, a candidate) as a person, whom a bee cannot tell apart."""
    return tuple(
        SeatInfo(seat=n, name=BEE_NAMES[(n - 1) % len(BEE_NAMES)], kind="bee", level=who)
        if who in LEVELS
        else SeatInfo(seat=n, name=f"Player {n}", kind="person", player_id=f"bench-{n}")
        for n, who in enumerate([first] + [others] * (players - 1), start=1)
    )


def play_one(first: str, others: str, players: int, number: int) -> dict[str, Any]:
    """Game `number` of `players` (the same deal in every line-up), seat 1 at `first`."""
    game_id = f"bench-{players}-{number}"
    seat1, rest = Timed(first, game_id), Timed(others, game_id)
    policies: list[Policy] = [seat1, *[rest] * (players - 1)]
    seats = seated(first, others, players)
    # A person's too-low bee takes the cheapest stem, as a bee's does by rule.
    state, _ = play_game(
        seats,
        policies,
        random.Random(f"deal/{players}/{number}"),
        lambda state, seat: cheapest_stem(state.stems),
    )
    stings = [s.stings for s in state.seats]
    won = 1 in state.winners
    return {
        "win": 1.0 if won else 0.0,
        "share": 1 / len(state.winners) if won else 0.0,
        "stings": stings[0],
        "others": statistics.fmean(stings[1:]),
        "cpu1": seat1.cpu_ms,
        "cpu_others": rest.cpu_ms,
    }


def _play_star(args: tuple[str, str, int, int]) -> dict[str, Any]:
    return play_one(*args)


def cpu_summary(samples: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(samples), 3),
        "p99": round(percentile(samples, 99), 3),
        "decisions": len(samples),
    }


def run(
    pool: ProcessPoolExecutor, first: str, others: str, players: int, games: int
) -> dict[str, Any]:
    started = time.perf_counter()
    tasks = [(first, others, players, n) for n in range(games)]
    results = list(pool.map(_play_star, tasks, chunksize=max(1, games // 16)))
    shares = [r["share"] for r in results]
    wins = [r["win"] for r in results]
    mine = [float(r["stings"]) for r in results]
    theirs = [r["others"] for r in results]
    return {
        "run": f"{LABEL[first]} vs {players - 1} {LABEL[others]}",
        "seat1": first,
        "others": others,
        "players": players,
        "games": games,
        "fair_share": round(1 / players, 4),
        "win_share": round(statistics.fmean(shares), 4),
        "win_share_ci95": [round(x, 4) for x in bootstrap(shares)],
        "win_rate": round(statistics.fmean(wins), 4),
        "win_rate_ci95": [round(x, 4) for x in bootstrap(wins)],
        "stings_seat1": round(statistics.fmean(mine), 2),
        "stings_others": round(statistics.fmean(theirs), 2),
        "stings_gap_ci95": [
            round(x, 2) for x in bootstrap([a - b for a, b in zip(mine, theirs, strict=True)])
        ],
        "cpu_ms_seat1": cpu_summary([ms for r in results for ms in r["cpu1"]]),
        "cpu_ms_others": cpu_summary([ms for r in results for ms in r["cpu_others"]]),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "seconds": round(time.perf_counter() - started, 1),
    }


def answer_times(games: int, level: BeeLevel = "expert", players: int = 8) -> dict[str, Any]:
    """How long a person waits for a table of `level` bees: one person (seat 1, playing the
    heuristic's bee) and `players - 1` bees, through
    `service.domain.bee_answers.decide_with_bees` as the service calls it (in a worker thread);
    each of the person's moves is timed until the bees have answered (the turn flown and every
    bee's next pick made). Wall and CPU time, one process."""
    bees = [
        SeatInfo(seat=s, name=BEE_NAMES[(s - 2) % len(BEE_NAMES)], kind="bee", level=level)
        for s in range(2, players + 1)
    ]
    seats = (SeatInfo(seat=1, name="Ann", kind="person", player_id="p1"), *bees)
    wall: list[float] = []
    cpu: list[float] = []
    for number in range(games):
        game_id = f"answer-{players}-{number}"
        seed_for = decision_seeds(BENCH_SERVER_SEED, game_id)
        deal = shuffled_deck(players, random.Random(f"deal/{players}/{number}"))
        command = StartGame(game_id=game_id, table_id="t", seats=seats, deck_order=deal)
        state, _ = decide_with_bees(initial_state, command, seed_for)
        while state.phase != "ended":
            if state.phase == "choosing":
                move: ConfirmPick | TakeStem = TakeStem(seat=1, stem=cheapest_stem(state.stems))
            else:
                move = ConfirmPick(seat=1, bee=choose_bee(view_for(state, 1)))
            started, cpu_started = time.perf_counter(), time.process_time()
            state, _ = decide_with_bees(state, move, seed_for)
            cpu.append((time.process_time() - cpu_started) * 1000)
            wall.append((time.perf_counter() - started) * 1000)
    return {
        "level": level,
        "players": players,
        "moves": len(wall),
        "wall_ms": cpu_summary(wall),
        "cpu_ms": cpu_summary(cpu),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def print_table(results: list[dict[str, Any]]) -> None:
    print(
        f"{'seat 1 vs the others':<26} {'games':>5} {'win share [95%]':>22} {'fair':>5} "
        f"{'wins [95%]':>22} {'stings 1 / each other':>22}   CPU ms a decision, median / p99: "
        "seat 1; others"
    )
    for r in results:
        low, high = r["win_share_ci95"]
        share = f"{100 * r['win_share']:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
        low, high = r["win_rate_ci95"]
        wins = f"{100 * r['win_rate']:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
        stings = f"{r['stings_seat1']:.2f} / {r['stings_others']:.2f}"
        a, b = r["cpu_ms_seat1"], r["cpu_ms_others"]
        name = f"{r['run']} ({r['players']})"
        print(
            f"{name:<26} {r['games']:>5} {share:>22} "
            f"{100 * r['fair_share']:>4.1f}% {wins:>22} {stings:>22}   "
            f"{a['median']:.2f} / {a['p99']:.2f}; {b['median']:.2f} / {b['p99']:.2f}"
        )
    loads = [r["load_average"][0] for r in results]
    print(f"load average (1 min) at the end of each run: {loads} on {os.cpu_count()} cores")


def markdown_table(results: list[dict[str, Any]]) -> str:
    """The line-ups as docs/benchmarks.md shows them."""

    def pct(value: float, interval: list[float]) -> str:
        return f"{100 * value:.1f}% [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"

    lines = [
        "| seat 1 vs the others (players) | games | seat 1 win share [95%] | fair | seat 1 wins"
        " [95%] | stings: seat 1 / each other (gap [95%]) | CPU ms a decision, median / p99:"
        " seat 1; others |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        a, b = r["cpu_ms_seat1"], r["cpu_ms_others"]
        low, high = r["stings_gap_ci95"]
        lines.append(
            f"| {r['run']} ({r['players']}) | {r['games']} | "
            f"**{pct(r['win_share'], r['win_share_ci95'])}** | {100 * r['fair_share']:.1f}% | "
            f"{pct(r['win_rate'], r['win_rate_ci95'])} | {r['stings_seat1']:.2f} / "
            f"{r['stings_others']:.2f} ({r['stings_seat1'] - r['stings_others']:+.2f} "
            f"[{low:+.2f}, {high:+.2f}]) | {a['median']:.2f} / {a['p99']:.2f}; "
            f"{b['median']:.2f} / {b['p99']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few games of each line-up")
    parser.add_argument("--scale", type=float, default=1.0, help="games of each line-up × this")
    parser.add_argument("--only", help="only the line-ups with this level")
    parser.add_argument("--lineups", help="only these line-ups: PLAN indices, as 6,7")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--answer-games", type=int, default=10, help="games of a person + 7 experts"
    )
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    scale = 0.03 if args.quick else args.scale
    plan = [p for p in PLAN if args.only is None or args.only in p[:2]]
    if args.lineups:
        plan = [PLAN[int(i)] for i in args.lineups.split(",")]
    results = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for first, others, players, games in plan:
            games = max(4, int(games * scale))
            say(f"bees: {LABEL[first]} vs {players - 1} {LABEL[others]}, {games} games …")
            result = run(pool, first, others, players, games)
            say(
                f"  win share {100 * result['win_share']:.1f}% {result['win_share_ci95']},"
                f" {result['seconds']} s"
            )
            results.append(result)
            if args.json:  # kept line-up by line-up, so a run cut short keeps what it measured
                with open(args.json, "w", encoding="utf-8") as out:
                    json.dump({"lineups": results, "answer": None}, out, indent=2)
    print_table(results)
    print()
    print(markdown_table(results))
    answer: dict[str, Any] | None = None
    if args.answer_games > 0 and args.only in (None, "expert"):
        games = max(1, int(args.answer_games * scale))
        say(f"bees: a person's move at a table of 7 expert bees, {games} games …")
        answer = answer_times(games)
        w, c = answer["wall_ms"], answer["cpu_ms"]
        print(
            f"a person's move answered by 7 expert bees, {answer['moves']} moves: wall ms median"
            f" {w['median']:.0f}, p99 {w['p99']:.0f}; CPU ms median {c['median']:.0f},"
            f" p99 {c['p99']:.0f} (load average {answer['load_average'][0]})"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"lineups": results, "answer": answer}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
