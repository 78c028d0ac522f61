"""Where a bee lands (seed §3–§5), as three named rules, and the forecast built from them.

- `landing_stem`: a bee lands on the stem whose top bee is lower than it and closest to it;
  none such, and the bee is too low.
- `is_sixth`: a bee landing on a stem that already holds 5 is the sixth bee: its player takes
  the 5, and the bee starts the stem again.
- `too_low_stem` and `too_low_chooser`: a too-low bee takes a whole stem. Its player chooses
  which, except when the choice is the rule's (a bee player's bee, a seat that left) or the
  clock's (it played the seat's lowest bee, seed §7): then it is the cheapest stem, the fewest
  stings, then the fewest bees, then the lowest number.

The engine's cascade (`decide.py`) and the strong bee's rollouts (`rollout.py`) fly bees with
these same functions; they work on the engine's tuples and the rollouts' lists alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from service.domain.rules.cards import STEM_CAPACITY, pile_stings
from service.domain.rules.events import Chooser
from service.domain.rules.state import SeatState, Stem, Stems


def landing_stem(stems: Sequence[Sequence[int]], bee: int) -> int | None:
    """The stem (1–4) whose top bee is lower than `bee` and closest to it; None if too low."""
    best = best_top = number = 0
    for stem in stems:  # a counter, not enumerate: this runs for every bee that flies
        number += 1  # noqa: SIM113
        top = stem[-1]
        if best_top < top < bee:
            best, best_top = number, top
    return best or None


def is_sixth(stem: Sequence[int]) -> bool:
    """A bee landing on `stem` is the sixth bee: it takes the stem's 5 (seed §4)."""
    return len(stem) >= STEM_CAPACITY


def too_low_stem(stems: Sequence[Sequence[int]], stings: Sequence[int] | None = None) -> int:
    """The stem (1–4) a too-low bee takes when nobody chooses (seed §5): the fewest stings, then
    the fewest bees, then the lowest number. `stings`, each stem's stings, if already known."""
    best = low = bees = index = 0
    for stem in stems:  # one pass, a counter: it runs for every too-low bee, and in rollouts
        cost = pile_stings(stem) if stings is None else stings[index]
        if not index or cost < low or (cost == low and len(stem) < bees):
            best, low, bees = index, cost, len(stem)
        index += 1  # noqa: SIM113
    return best + 1


cheapest_stem = too_low_stem  # the name the views, the bees and the docs use


def too_low_chooser(seat: SeatState) -> Chooser | None:
    """Who chooses the stem this seat's too-low bee takes: None when its player does; "rule"
    for a bee player or a seat that left; "clock" when the turn clock played the seat's lowest
    bee (seed §7: no choice then)."""
    if seat.info.kind == "bee" or seat.left:
        return "rule"
    if seat.by_clock == "lowest":
        return "clock"
    return None


class StemCost(msgspec.Struct, frozen=True, kw_only=True):
    stem: int
    bees: int
    stings: int


class Forecast(msgspec.Struct, frozen=True, kw_only=True):
    """Where a bee would land if nobody else's got there first (seed §3)."""

    bee: int
    too_low: bool
    stem: int | None = None  # None when too low: its player would choose
    sixth: bool = False
    takes: Stem = ()
    takes_stings: int = 0


def stem_costs(stems: Sequence[Stem]) -> tuple[StemCost, ...]:
    return tuple(
        StemCost(stem=index + 1, bees=len(stem), stings=pile_stings(stem))
        for index, stem in enumerate(stems)
    )


def forecast(stems: Stems, bee: int) -> Forecast:
    stem = landing_stem(stems, bee)
    if stem is None:
        return Forecast(bee=bee, too_low=True)
    bees = stems[stem - 1]
    if is_sixth(bees):
        return Forecast(
            bee=bee,
            too_low=False,
            stem=stem,
            sixth=True,
            takes=bees,
            takes_stings=pile_stings(bees),
        )
    return Forecast(bee=bee, too_low=False, stem=stem)
