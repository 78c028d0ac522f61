"""Learn a playout policy for the expert's own later turns from its own picks (issue 45).

    python -m tests.bench.own_policy --games 200 --jobs 2 --out /tmp/own-policy.json

The expert's search plays its own later turns in each imagined game as hard's model does
(softmax of the heuristic's risk, 1 sting); a search improves once on the player it imagines,
so a better imagined self should give a better pick. This plays whole 4-player games of
expert self-play (deals `random.Random("fit/4/{n}")`, never the bench's), records each
decision's `batch.features` of the hand and the bee the expert played, and fits two models of
P(bee) on four fifths of them: a conditional logit (`fit_policy.fit`) and a network of one
hidden layer (`batch.PolicyNet`: `--hidden` tanh units beside a linear term, Adam on the
log-likelihood, a small L2, seeded). It prints each model's held-out mean log-likelihood and how
often its likeliest bee is the expert's, and writes both, fitted on every decision, to `--out`
(JSON). `python -m tests.bench.paired ... expert expert:own-net` (with `SWARM_OWN_POLICY` set to
that file) measures what each buys; docs/benchmarks.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import numpy.typing as npt

from service.domain.rules import batch
from service.domain.rules.cards import HAND_SIZE
from tests.bench.fit_policy import Decision, fit, game_decisions, score

Floats = npt.NDArray[np.float64]


def collect(number: int) -> list[Decision]:
    """The expert's decisions in self-play game `number` (`fit_policy.game_decisions`)."""
    return game_decisions("expert", 4, number, f"fit-4-{number}")


def _padded(data: list[Decision]) -> tuple[Floats, npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
    x = np.zeros((len(data), HAND_SIZE, batch.FEATURES))
    mask = np.zeros((len(data), HAND_SIZE), dtype=bool)
    y = np.zeros(len(data), dtype=np.int64)
    for i, (seen, pick) in enumerate(data):
        x[i, : len(seen)] = seen
        mask[i, : len(seen)] = True
        y[i] = pick
    return x, mask, y


def fit_net(
    data: list[Decision], hidden: int, steps: int = 3000, seed: int = 45
) -> batch.PolicyNet:
    """`batch.PolicyNet` by full-batch Adam on the mean log-likelihood of the picks."""
    x, mask, y = _padded(data)
    rows = np.arange(len(y))
    mean = x[mask].mean(axis=0)
    scale = x[mask].std(axis=0) + 1e-6
    z = (x - mean) / scale
    rng = np.random.default_rng(seed)
    params = {
        "hidden": rng.normal(0, 0.3, (batch.FEATURES, hidden)),
        "bias": np.zeros(hidden),
        "out": rng.normal(0, 0.3, hidden),
        "linear": np.zeros(batch.FEATURES),
    }
    first = {k: np.zeros_like(v) for k, v in params.items()}
    second = {k: np.zeros_like(v) for k, v in params.items()}
    for step in range(1, steps + 1):
        a = np.tanh(z @ params["hidden"] + params["bias"])
        s = np.where(mask, a @ params["out"] + z @ params["linear"], -1e9)
        p = np.exp(s - s.max(axis=1, keepdims=True)) * mask
        p /= p.sum(axis=1, keepdims=True)
        g = p.copy()
        g[rows, y] -= 1
        g /= len(y)  # the gradient of minus the mean log-likelihood in each score
        da = g[..., None] * params["out"] * (1 - a**2)
        grads = {
            "hidden": np.einsum("nkf,nkh->fh", z, da) + 1e-4 * params["hidden"],
            "bias": da.sum(axis=(0, 1)),
            "out": np.einsum("nk,nkh->h", g, a) + 1e-4 * params["out"],
            "linear": np.einsum("nk,nkf->f", g, z),
        }
        for k, grad in grads.items():
            first[k] = 0.9 * first[k] + 0.1 * grad
            second[k] = 0.999 * second[k] + 0.001 * grad**2
            m = first[k] / (1 - 0.9**step)
            v = second[k] / (1 - 0.999**step)
            params[k] = params[k] - 0.01 * m / (np.sqrt(v) + 1e-8)
    return batch.PolicyNet(mean, scale, **params)


def net_score(net: batch.PolicyNet, data: list[Decision]) -> tuple[float, float]:
    """Mean log-likelihood and how often the likeliest bee is the pick."""
    loglik, hits = 0.0, 0
    for seen, pick in data:
        s = net.scores(seen)
        s = s - s.max()
        loglik += float(s[pick] - np.log(np.exp(s).sum()))
        hits += int(np.argmax(s) == pick)
    return loglik / len(data), hits / len(data)


def net_json(net: batch.PolicyNet) -> dict[str, object]:
    return {k: np.asarray(v).tolist() for k, v in net._asdict().items()}


def load_net(path: str) -> batch.PolicyNet:
    with open(path, encoding="utf-8") as f:
        got = json.load(f)["net"]
    return batch.PolicyNet(**{k: np.array(v, dtype=np.float64) for k, v in got.items()})


def load_logit(path: str) -> tuple[float, ...]:
    with open(path, encoding="utf-8") as f:
        return tuple(json.load(f)["logit"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        data = [d for game in pool.map(collect, range(args.games)) for d in game]
    random.Random(29).shuffle(data)
    held = len(data) // 5
    test, train = data[:held], data[held:]
    logit = fit(train)
    net = fit_net(train, args.hidden)
    heuristic = np.array((-1.0,) + (0.0,) * (batch.FEATURES - 1))
    print(f"{len(data)} decisions of {args.games} games; held out: {held}")
    for name, (loglik, hits) in (
        ("uniform", score(np.zeros(batch.FEATURES), test)),
        ("hard's model (softmax of -risk)", score(heuristic, test)),
        ("logit", score(logit, test)),
        (f"network ({args.hidden} hidden)", net_score(net, test)),
    ):
        print(f"  {name}: mean log-likelihood {loglik:.3f}, likeliest = expert's {100 * hits:.1f}%")
    fitted = {
        "teacher": "expert",
        "games": args.games,
        "logit": [float(v) for v in fit(data)],
        "net": net_json(fit_net(data, args.hidden)),
    }
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump(fitted, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
