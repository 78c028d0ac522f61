"""The strong bee: determinized Monte Carlo over the hands it cannot see.

For each sample it deals the unseen bees (deck minus its hand, the stems, the piles) at random
into the other playing hands, which is exactly what everything public allows: every hand holds
as many bees as its own, and any unseen bee may be in any of them. Then, for every bee in its
hand, it plays this turn and the next `DEPTH - 1` out with the fast `quick_pick` policy on
every seat, its own included (`rollout.fly` flies them), and scores the stings it takes. All
bees in hand are tried on the same samples (common random numbers), so the comparison between
them is sharper than each estimate alone. It plays the bee with the fewest mean stings.

The work is a fixed count of imagined card choices (`WORK`), spread over the samples, so a
decision takes about the same time at every turn and is fully determined by the view and the
seed: the only randomness is a `random.Random` seeded from `seed`, and nothing in the view can
reveal the deal (`BeeView` holds no other hand). The policy never reads a clock.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from service.domain.rules.bee_view import BeeView
from service.domain.rules.cards import STEM_CAPACITY, deck
from service.domain.rules.flight import landing_stem, too_low_stem
from service.domain.rules.rollout import STINGS, fly

# Turns imagined, this one included. Deeper rollouts cost samples, and the stings of later
# turns depend less on this choice: at 8 players against the heuristic, depths 2, 4 and 6
# gave 10.5, 9.6 and 10.5 stings a game (docs/benchmarks.md, "Bee players").
DEPTH = 4
# Imagined card evaluations a decision may spend (see `_samples`), which sets its time: chosen
# so that even the p99 of a decision's CPU time on the shared 2-core bench machine stays inside
# the budgets of 50 ms at 4 players and 100 ms at 8 (docs/benchmarks.md, "Bee players"); a
# bigger table gets more, as its budget allows.
WORK = 36_000
WORK_PER_SEAT = 11_000  # added for each seat beyond 4
MIN_SAMPLES = 8
_PICK = 4  # the fixed cost of one `quick_pick` call, in cards looked at
_FACT = tuple(math.factorial(k) for k in range(STEM_CAPACITY + 1))


def quick_pick(hand: Sequence[int], stems: list[list[int]], sums: list[int], rate: float) -> int:
    """A fast one-turn heuristic for the rollouts: the bee that risks the fewest stings now.

    A sixth or too-low bee costs what it takes; any other risks its stem filling before it lands,
    the arrivals being about Poisson(gap * rate) with `rate` the chance that a given number
    between the stem's top and ours is played this turn (bounded here by the first Poisson term).
    """
    best = hand[0]
    best_cost = math.inf
    for bee in hand:
        number = landing_stem(stems, bee)
        if number is None:  # too low: it takes the cheapest stem
            cost = float(sums[too_low_stem(stems, sums) - 1]) + 0.5
        else:
            target = number - 1
            top = stems[target][-1]
            length = len(stems[target])
            if length >= STEM_CAPACITY:  # the sixth bee
                cost = float(sums[target])
            else:
                needed = STEM_CAPACITY - length
                mean = (bee - top - 1) * rate
                chance = mean**needed / _FACT[needed]
                if chance > 1.0:
                    chance = 1.0
                cost = chance * (sums[target] + 1.5 * needed) + 0.001 * (bee - top)
        if cost < best_cost:
            best, best_cost = bee, cost
    return best


def _samples(players: int, hand: int, unseen: int, depth: int, work: int) -> int:
    """How many deals to sample so that the decision spends about `work` units, a unit being
    about one card looked at by `quick_pick` (a pick, a flight, a deal cost a few)."""
    per_candidate = players * 2 + sum(
        players * (_PICK + hand - t) for t in range(1, min(depth, hand))
    )
    per_sample = unseen + players * (_PICK + hand) + hand * per_candidate
    return max(MIN_SAMPLES, work // per_sample)


def choose_bee_strong(view: BeeView, seed: bytes, work: int | None = None) -> int:
    """The strong bee's pick from what `view` shows, its random stream seeded by `seed`;
    `work` (default: `WORK`, and `WORK_PER_SEAT` more for each seat beyond 4) is the budget,
    in the units of `_samples`."""
    hand = sorted(view.hand)
    if len(hand) == 1:
        return hand[0]
    rng = random.Random(int.from_bytes(seed, "big"))
    mine = set(hand)
    unseen = [b for b in deck(view.players) if b not in view.seen and b not in mine]
    # Every other playing seat holds as many bees as this one; a seat that left keeps its hand
    # and never plays again, so its bees are simply the unseen ones no playing hand gets.
    others = [s for s in range(1, view.players + 1) if s != view.seat and s not in view.left]
    size = len(hand)
    seats = len(others) + 1  # index 0 is this bee in the imagined games
    depth = min(DEPTH, size)
    # A given bee between a stem's top and ours is in some other hand with the chance
    # (others' bees) / (bees not yet played), then played this turn with 1 / (hand size): the
    # product is the same at every turn.
    rate = (seats - 1) / len(deck(view.players))
    if work is None:
        work = WORK + WORK_PER_SEAT * max(0, view.players - 4)
    samples = _samples(seats, size, len(unseen), depth, work)
    totals = [0] * size
    base_stems = [list(stem) for stem in view.stems]
    base_sums = [sum(STINGS[b] for b in stem) for stem in view.stems]
    for _ in range(samples):
        rng.shuffle(unseen)
        hands = [hand] + [sorted(unseen[i * size : (i + 1) * size]) for i in range(len(others))]
        # the others' picks this turn do not depend on ours: choose them once for every bee
        first = [(quick_pick(hands[s], base_stems, base_sums, rate), s) for s in range(1, seats)]
        for index, bee in enumerate(hand):
            stems = [list(stem) for stem in base_stems]
            sums = list(base_sums)
            scores = [0] * seats
            fly(stems, sums, scores, [(bee, 0), *first])
            left = [list(h) for h in hands]
            left[0].remove(bee)
            for played, s in first:
                left[s].remove(played)
            for _turn in range(1, depth):
                picks = [(quick_pick(left[s], stems, sums, rate), s) for s in range(seats)]
                for played, s in picks:
                    left[s].remove(played)
                fly(stems, sums, scores, picks)
            totals[index] += scores[0]
    best = min(range(size), key=lambda i: (totals[i], hand[i]))
    return hand[best]
