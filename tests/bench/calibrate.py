"""How noisy a player is, as the expert's model of the others sees it (issue 45).

    python -m tests.bench.calibrate --players 4 --games 40 mcs-total

The expert imagines each other seat playing the bee of its hand with the least value in the
decision's MCS table (`batch.mcs_tables`) plus Gumbel noise of `table_temperature` stings. This
plays `--games` games of four (or `--players`) seats all of one kind (a `bees.SEEDED` name), and
at each of seat 1's decisions makes the table from its view as the expert would; then it prints
the temperature under which the picks are likeliest (maximum likelihood on a grid), overall and
by hand size, and how often the player's bee is the table's least. An MCS player's noise falls
with its playouts a bee: MCS(100) (100 a bee) is best fitted near 0.6, rl-6-nimmt's
MCSAgent(mc_max=100) (100 a decision) near 1.6 (docs/benchmarks.md, issue 45's fifth round).
"""

from __future__ import annotations

import argparse
import random

import numpy as np

from service.domain.rules import batch
from service.domain.rules.bee_view import BeeView
from service.domain.rules.bees import bee_decision_seed
from service.domain.rules.engine import cheapest_stem
from service.domain.rules.simulate import play_game
from tests.bench import bees

GRID = (0.2, 0.4, 0.6, 0.8, 1.0, 1.3, 1.6, 2.0, 2.5, 3.0, 4.0)
HANDS = ((7, 10), (4, 6), (2, 3))
TABLE = 2000  # the expert's table (`expert.EXPERT.table`)


def collect(kind: str, games: int, players: int, first: int) -> list[tuple[np.ndarray, int]]:
    """(the table's values of seat 1's hand, the slot it played) for each of its decisions."""
    decide = bees.SEEDED[kind]
    rng = np.random.Generator(np.random.PCG64(first))
    picks: list[tuple[np.ndarray, int]] = []
    for n in range(first, first + games):
        game_id = f"calibrate-{players}-{n}"

        def policy(view: BeeView, game_id: str = game_id) -> int:
            hand = sorted(view.hand)
            turn = 11 - len(hand)
            seed = bee_decision_seed(bees.BENCH_SERVER_SEED, game_id, view.seat, turn, "pick")
            bee = decide(view, seed)
            if view.seat == 1 and len(hand) > 1:
                seats = view.players - len(view.left)
                table = batch.view_tables(view, seats, TABLE, rng).pick
                picks.append((table[hand], hand.index(bee)))
            return bee

        seats = bees.seated(kind, kind, players)
        play_game(
            seats,
            [policy] * players,
            random.Random(f"deal/{players}/{n}"),
            lambda state, seat: cheapest_stem(state.stems),
        )
    return picks


def likelihood(temperature: float, picks: list[tuple[np.ndarray, int]]) -> float:
    """The mean log-likelihood of the picks under the table with Gumbel noise (softmax)."""
    total = 0.0
    for values, slot in picks:
        z = -values / temperature
        z = z - z.max()
        total += float(z[slot] - np.log(np.exp(z).sum()))
    return total / max(1, len(picks))


def report(picks: list[tuple[np.ndarray, int]]) -> dict[str, object]:
    """The likeliest temperature and the table's agreement, overall and by hand size."""
    out: dict[str, object] = {}
    for label, low, high in (("all", 2, 10), *((f"hand {a}-{b}", a, b) for a, b in HANDS)):
        these = [p for p in picks if low <= len(p[0]) <= high]
        if not these:
            continue
        fits = {t: likelihood(t, these) for t in GRID}
        best = max(fits, key=lambda t: fits[t])
        agree = float(np.mean([int(np.argmin(v)) == s for v, s in these]))
        out[label] = {"picks": len(these), "temperature": best, "table_agrees": agree}
        print(f"{label}: {len(these)} picks, likeliest temperature {best}, the table's least is")
        print(f"  the player's bee in {100 * agree:.0f}%; mean log-likelihood by temperature:")
        print("  " + " ".join(f"{t}:{fits[t]:.3f}" for t in GRID))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kind", help="a bees.SEEDED name: mcs, mcs-total, hard, expert…")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--first", type=int, default=9000, help="the first deal")
    args = parser.parse_args()
    report(collect(args.kind, args.games, args.players, args.first))


if __name__ == "__main__":
    main()
