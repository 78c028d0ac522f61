"""The bee players: who they are and how they choose a bee.

A bee sees only what its seat may see (`BeeView`: its own hand, the stems, the piles and the
bees revealed so far), never another hand, so it cannot cheat even by accident. Its picks are
recorded as events like anyone's: a replay never runs this policy again.

The heuristic scores each bee in hand by the stings it risks this turn:
- a sixth bee or a too-low bee costs what it takes, for certain;
- otherwise the bee is safe only if fewer than `5 - len(stem)` other bees land on that stem
  before it. Every unseen bee between the stem's top and ours would land there, and each other
  player throws one bee of a hand of `h`, so the count that arrives is about Poisson(gap / h);
  the risk is that tail times the stings the stem will hold.
It then plays the cheapest, preferring a tight fit (a small gap) on ties.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from service.domain.rules.cards import STEM_CAPACITY, deck, pile_stings, stings
from service.domain.rules.commands import ConfirmPick
from service.domain.rules.engine import GameState, Stems, cheapest_stem, forecast

BEE_NAMES = ("Buzz", "Bumble", "Honey", "Clover", "Pollen", "Nectar", "Waggle")


class BeeView(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one seat is allowed to know when it picks."""

    seat: int
    players: int
    hand: tuple[int, ...]
    stems: Stems
    seen: frozenset[int]  # bees whose place is public: on stems, in piles, already revealed


def view_for(state: GameState, seat: int) -> BeeView:
    seen: set[int] = set()
    for stem in state.stems:
        seen.update(stem)
    for other in state.seats:
        seen.update(other.pile)
    seen.update(p.bee for p in state.in_flight)
    return BeeView(
        seat=seat,
        players=len(state.seats),
        hand=state.seat(seat).hand,
        stems=state.stems,
        seen=frozenset(seen),
    )


def _poisson_at_least(k: int, mean: float) -> float:
    if k <= 0:
        return 1.0
    below = sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k))
    return max(0.0, 1.0 - below)


def bee_risk(view: BeeView, bee: int) -> float:
    """Expected stings that playing `bee` costs this turn (see the module's docstring)."""
    where = forecast(view.stems, bee)
    if where.too_low:
        return float(pile_stings(view.stems[cheapest_stem(view.stems) - 1]))
    if where.sixth:
        return float(where.takes_stings)
    assert where.stem is not None
    stem = view.stems[where.stem - 1]
    unseen = set(deck(view.players)) - view.seen - set(view.hand)
    gap = sum(1 for b in unseen if stem[-1] < b < bee)
    hand_size = max(len(view.hand), 1)
    needed = STEM_CAPACITY - len(stem)
    chance = _poisson_at_least(needed, gap / hand_size)
    return chance * (pile_stings(stem) + 1.5 * needed) + 0.001 * gap


def choose_bee(view: BeeView) -> int:
    return min(view.hand, key=lambda bee: (bee_risk(view, bee), -stings(bee), bee))


def bee_seats_to_pick(state: GameState) -> Sequence[int]:
    if state.phase != "picking":
        return ()
    return [s.number for s in state.seats if s.is_bee and s.playing and s.confirmed is None]


def bee_commands(state: GameState) -> list[ConfirmPick]:
    """The picks every bee player makes now (they pick at once, at the start of a turn)."""
    return [
        ConfirmPick(seat=seat, bee=choose_bee(view_for(state, seat)))
        for seat in bee_seats_to_pick(state)
    ]
