"""Paired trials of bee candidates: the same deals, only seat 1 changed (issue 29).

    python -m tests.bench.paired --players 4 --games 100 --against mcs expert expert:win
    python -m tests.bench.paired --report FILE x   # the figures of a run's --json, cut short

Each candidate is a `tests.bench.bees.SEEDED` level, or `level:option` for one of
`CANDIDATES` below. For every game (deal n, as `make bench-bees` deals it) every candidate
plays seat 1 against the same others, one game after another (interleaved, so the machine's
load falls on all alike). It prints each candidate's win share and stings with 95% bootstrap
intervals, and the paired difference from the first candidate (the bootstrap resamples games,
keeping each game's pair together). One process: run it under `nice -n 10`.
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

from service.domain.rules import batch
from service.domain.rules.expert import EXPERT
from tests.bench import bees, own_policy

BATCH_WORK = 4_500_000


def _batch(**how: object) -> bees.Seeded:
    config = batch.Search(work=BATCH_WORK, **how)  # type: ignore[arg-type]
    return lambda view, seed: batch.search(view, seed, config)[0]


def bees_search(config: batch.Search) -> bees.Seeded:
    return lambda view, seed: batch.search(view, seed, config)[0]


def _weights(path: str) -> tuple[float, ...]:
    with open(path, encoding="utf-8") as f:
        return tuple(json.load(f)["weights"])


# softmax(-risk / 1 sting) of the heuristic's own risk, as a logit over `batch.features`
HEURISTIC_WEIGHTS = (-1.0,) + (0.0,) * (batch.FEATURES - 1)
CANDIDATES: dict[str, Callable[[], bees.Seeded]] = {
    "batch": lambda: _batch(),
    "batch:win": lambda: _batch(objective="win"),
    "batch:gap": lambda: _batch(own_gap=True),
    "batch:win:gap": lambda: _batch(objective="win", own_gap=True),
    "batch:win:gap:own03": lambda: _batch(objective="win", own_gap=True, own_temperature=0.3),
    "batch:t2": lambda: _batch(temperature=2.0),
    "batch:rand": lambda: _batch(temperature=1e9),  # uniform random players: MCS's playouts
    "batch:win:rand": lambda: _batch(objective="win", temperature=1e9),
    "batch:win:rand9": lambda: bees_search(
        batch.Search(work=9_000_000, objective="win", temperature=math.inf)
    ),
    "batch:mix": lambda: _batch(random_share=0.5),
    "batch:mix:gap": lambda: _batch(random_share=0.5, own_gap=True),
    # the others' bees this turn as an MCS(k) would play them from their view of each deal
    "batch:mix:n8": lambda: _batch(random_share=0.5, nested=8),
    "batch:mix:n8d4": lambda: _batch(random_share=0.5, nested=8, nested_depth=4),
    "batch:mix:n8d4h": lambda: _batch(random_share=0.5, nested=8, nested_depth=4, nested_share=0.5),
    "batch:n8d4": lambda: _batch(nested=8, nested_depth=4),
    "batch:mix:n4d2": lambda: _batch(random_share=0.5, nested=4, nested_depth=2),
    "batch:mix:n4d2h": lambda: _batch(random_share=0.5, nested=4, nested_depth=2, nested_share=0.5),
    "batch:mix:n4": lambda: _batch(random_share=0.5, nested=4),
    "batch:mix:n16d4": lambda: _batch(random_share=0.5, nested=16, nested_depth=4),
    # learned playout players: $SWARM_FIT (opponents) and $SWARM_FIT_OWN (its own seat)
    "batch:fit": lambda: _batch(weights=_weights(os.environ["SWARM_FIT"])),
    "batch:win:fit": lambda: _batch(objective="win", weights=_weights(os.environ["SWARM_FIT"])),
    "batch:fit:heur": lambda: _batch(
        weights=_weights(os.environ["SWARM_FIT"]), own_weights=HEURISTIC_WEIGHTS
    ),
    "batch:win:fit:heur": lambda: _batch(
        objective="win", weights=_weights(os.environ["SWARM_FIT"]), own_weights=HEURISTIC_WEIGHTS
    ),
    # the expert, its own later turns by a policy learned from its picks (`own_policy.py`):
    # $SWARM_OWN_POLICY
    "expert:own-logit": lambda: bees_search(
        EXPERT._replace(own_weights=own_policy.load_logit(os.environ["SWARM_OWN_POLICY"]))
    ),
    "expert:own-net": lambda: bees_search(
        EXPERT._replace(own_net=own_policy.load_net(os.environ["SWARM_OWN_POLICY"]))
    ),
    "batch:fit:own": lambda: _batch(
        weights=_weights(os.environ["SWARM_FIT"]),
        own_weights=_weights(os.environ["SWARM_FIT_OWN"]),
    ),
}


def _spec(name: str) -> bees.Seeded:
    """`search:work=6000000,random_share=0.5,nested=4`: a `batch.Search` from its fields."""
    fields = dict(kv.split("=", 1) for kv in name.removeprefix("search:").split(",") if kv)
    how: dict[str, object] = {"work": BATCH_WORK}
    for key, value in fields.items():
        default = batch.Search._field_defaults.get(key, 0)
        if isinstance(default, str):
            how[key] = value
        elif isinstance(default, bool):
            how[key] = value == "1"
        else:
            how[key] = int(value) if isinstance(default, int) else float(value)
    return bees_search(batch.Search(**how))  # type: ignore[arg-type]


def paired_interval(a: list[float], b: list[float], seed: int = 29) -> tuple[float, float]:
    rng = random.Random(seed)
    n = len(a)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(bees.RESAMPLES))
    return means[int(0.025 * bees.RESAMPLES)], means[int(0.975 * bees.RESAMPLES) - 1]


def report(results: dict[str, list[dict[str, Any]]]) -> None:
    """Each candidate's figures, and its paired difference from the first, over the games all
    of them played (a run cut short: those it kept)."""
    games = min(len(r) for r in results.values())
    results = {c: r[:games] for c, r in results.items()}
    print(f"{games} games")
    base = next(iter(results))
    for c in results:
        shares = [r["share"] for r in results[c]]
        stings = [float(r["stings"]) for r in results[c]]
        cpu = [ms for r in results[c] for ms in r["cpu1"]]
        low, high = bees.bootstrap(shares)
        line = (
            f"{c:<16} share {100 * statistics.fmean(shares):5.1f}% [{100 * low:.1f}, "
            f"{100 * high:.1f}]  stings {statistics.fmean(stings):5.2f}  cpu ms median "
            f"{statistics.median(cpu):.0f} p99 {bees.percentile(cpu, 99):.0f}"
        )
        if c != base:
            b_shares = [r["share"] for r in results[base]]
            b_stings = [float(r["stings"]) for r in results[base]]
            dl, dh = paired_interval(shares, b_shares)
            sl, sh = paired_interval(stings, b_stings)
            gain = statistics.fmean(shares) - statistics.fmean(b_shares)
            fewer = statistics.fmean(stings) - statistics.fmean(b_stings)
            line += (
                f"  vs {base}: share {100 * gain:+.1f} [{100 * dl:+.1f}, {100 * dh:+.1f}],"
                f" stings {fewer:+.2f} [{sl:+.2f}, {sh:+.2f}]"
            )
        print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidates", nargs="+")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--first", type=int, default=0, help="the first deal's number")
    parser.add_argument("--against", default="mcs")
    parser.add_argument("--json", default=None)
    parser.add_argument("--report", default=None, help="print the figures of a run's --json")
    args = parser.parse_args(argv)
    if args.report:
        with open(args.report, encoding="utf-8") as f:
            report(json.load(f))
        return 0
    for name in args.candidates:
        if name in CANDIDATES:
            bees.SEEDED.setdefault(name, CANDIDATES[name]())
        elif name.startswith("search:"):
            bees.SEEDED.setdefault(name, _spec(name))
        bees.LABEL.setdefault(name, name)
    results: dict[str, list[dict[str, Any]]] = {c: [] for c in args.candidates}
    started = time.perf_counter()
    for n in range(args.first, args.first + args.games):
        for c in args.candidates:
            results[c].append(bees.play_one(c, args.against, args.players, n))
        if (n - args.first + 1) % 10 == 0:
            if args.json:  # kept as it goes, so a run cut short keeps what it played
                with open(args.json, "w", encoding="utf-8") as out:
                    json.dump(results, out)
            line = ", ".join(
                f"{c} {100 * statistics.fmean(r['share'] for r in results[c]):.1f}%"
                for c in args.candidates
            )
            print(
                f"{n - args.first + 1} games, {time.perf_counter() - started:.0f} s: {line}",
                file=sys.stderr,
                flush=True,
            )
    print(f"seat 1 vs {args.players - 1} {args.against}, {args.games} games from deal {args.first}")
    report(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
