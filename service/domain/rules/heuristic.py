"""The heuristic level: each bee in hand scored by the stings it risks this turn.

- a sixth bee or a too-low bee costs what it takes, for certain;
- otherwise the bee is safe only if fewer than `5 - len(stem)` other bees land on that stem
  before it. Every unseen bee between the stem's top and ours would land there, and each other
  player throws one bee of a hand of `h`, so the count that arrives is about Poisson(gap / h);
  the risk is that tail times the stings the stem will hold.
It then plays the cheapest, preferring a tight fit (a small gap) on ties. No seed: the same view
always gives the same bee.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right

from service.domain.rules.bee_view import BeeView, unseen_bees
from service.domain.rules.cards import STEM_CAPACITY, pile_stings, stings
from service.domain.rules.flight import is_sixth, landing_stem, too_low_stem


def _poisson_at_least(k: int, mean: float) -> float:
    if k <= 0:
        return 1.0
    below = sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k))
    return max(0.0, 1.0 - below)


class _Decision:
    """What one decision needs about the table, built once for all the bees in hand: the
    unseen bees (sorted, so a gap is two bisections), each stem's stings, the cheapest stem's."""

    def __init__(self, view: BeeView) -> None:
        self.view = view
        self.unseen = unseen_bees(view)
        self.sums = [pile_stings(stem) for stem in view.stems]
        self.cheapest = self.sums[too_low_stem(view.stems, self.sums) - 1]
        self.hand_size = max(len(view.hand), 1)

    def risk(self, bee: int) -> float:
        stems = self.view.stems
        where = landing_stem(stems, bee)
        if where is None:
            return float(self.cheapest)
        stem = stems[where - 1]
        if is_sixth(stem):
            return float(self.sums[where - 1])
        gap = bisect_left(self.unseen, bee) - bisect_right(self.unseen, stem[-1])
        needed = STEM_CAPACITY - len(stem)
        chance = _poisson_at_least(needed, gap / self.hand_size)
        return chance * (self.sums[where - 1] + 1.5 * needed) + 0.001 * gap


def bee_risk(view: BeeView, bee: int) -> float:
    """Expected stings that playing `bee` costs this turn (see the module's docstring)."""
    return _Decision(view).risk(bee)


def choose_bee(view: BeeView) -> int:
    """The heuristic bee's pick."""
    decision = _Decision(view)
    return min(view.hand, key=lambda bee: (decision.risk(bee), -stings(bee), bee))
