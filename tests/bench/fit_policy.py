"""Fit the expert's playout policy: a conditional logit over `batch.features`, from the picks of
a strong player (issue 29; docs/benchmarks.md, "Bee players").

    python -m tests.bench.fit_policy --teacher mcs --games 150 --out /tmp/policy.json

It plays whole games (deals of its own, `random.Random("fit/{players}/{n}")`, never the bench's)
with the teacher on every seat, records at each decision what the seat saw of each bee in its
hand (`batch.features` of its `BeeView`) and the bee it played, and fits P(bee) ∝ exp(w · f) by
Newton's method (the log-likelihood is concave; a small ridge keeps it well posed). It prints
the weights and the fit (mean log-likelihood, how often the model's likeliest bee is the
teacher's) on a held-out fifth of the decisions. One process: run it under `nice -n 10`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

import numpy as np
import numpy.typing as npt

from service.domain.rules import batch
from service.domain.rules.bees import BeeView, bee_decision_seed
from service.domain.rules.simulate import bee_seats, play_game
from tests.bench import bees

Decision = tuple[npt.NDArray[np.float64], int]


def game_decisions(teacher: str, players: int, number: int, game_id: str) -> list[Decision]:
    """`teacher`'s decisions on every seat of game `number` (deal `fit/{players}/{number}`):
    what each seat saw of its hand (`batch.features`) and the slot of the bee it played, each
    decision seeded from `game_id`, the seat and the turn."""
    decide = bees.SEEDED[teacher]
    out: list[Decision] = []

    def policy(view: BeeView) -> int:
        turn = 11 - len(view.hand)
        seed = bee_decision_seed(b"fit", game_id, view.seat, turn, "pick")
        bee = decide(view, seed)
        if len(view.hand) > 1:
            out.append((batch.view_features(view), sorted(view.hand).index(bee)))
        return bee

    play_game(bee_seats(players), [policy] * players, random.Random(f"fit/{players}/{number}"))
    return out


def collect(teacher: str, players: int, games: int) -> list[Decision]:
    # every game's decisions seeded alike, as when the fit of issue 29 was made
    return [d for n in range(games) for d in game_decisions(teacher, players, n, f"fit-{players}")]


def fit(data: list[Decision], ridge: float = 1e-3, rounds: int = 30) -> npt.NDArray[np.float64]:
    w = np.zeros(batch.FEATURES)
    for _ in range(rounds):
        grad = -ridge * w
        hess = -ridge * np.eye(batch.FEATURES)
        for x, y in data:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            mean = p @ x
            grad += x[y] - mean
            hess -= (x * p[:, None]).T @ x - np.outer(mean, mean)
        step = np.linalg.solve(hess, grad)
        w = w - step
        if np.abs(step).max() < 1e-6:
            break
    return w


def score(w: npt.NDArray[np.float64], data: list[Decision]) -> tuple[float, float]:
    loglik = 0.0
    hits = 0
    for x, y in data:
        z = x @ w
        z = z - z.max()
        loglik += z[y] - np.log(np.exp(z).sum())
        hits += int(np.argmax(z) == y)
    return loglik / len(data), hits / len(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teacher", default="mcs")
    parser.add_argument("--games", type=int, default=150, help="4-player games")
    parser.add_argument("--games8", type=int, default=30, help="8-player games")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    data = collect(args.teacher, 4, args.games) + collect(args.teacher, 8, args.games8)
    random.Random(29).shuffle(data)
    held = len(data) // 5
    w = fit(data[held:])
    test = data[:held]
    base = score(np.zeros(batch.FEATURES), test)
    got = score(w, test)
    print(
        f"{len(data)} decisions; held-out mean log-likelihood {got[0]:.3f} (uniform"
        f" {base[0]:.3f}), likeliest = teacher's {100 * got[1]:.1f}%"
    )
    w = fit(data)
    print("weights", [round(float(v), 4) for v in w])
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump({"teacher": args.teacher, "weights": [float(v) for v in w]}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
