"""What knowing every hand is worth to the expert: a bound on information-set sampling (issue 45).

    python -m tests.bench.clairvoyant --players 4 --games 100 --first 3000 expert clairvoyant

A diagnostic, never a level: `clairvoyant` is the expert's search told the true hidden hands
(every imagined deal is the real one: `batch.deal_hidden` replaced in this process); everything
else, the models of how the others pick included, is the expert's. Sampling the hidden hands by
how likely they make the others' past picks can at best come near this, so if the clairvoyant
expert wins little more than the expert, such sampling is not worth building. The arguments
are `tests.bench.paired`'s (the same deals, only seat 1 changed).
"""

from __future__ import annotations

import sys

import numpy as np

from service.domain.rules import batch, simulate
from service.domain.rules.bees import BeeView, view_for
from service.domain.rules.engine import GameState
from service.domain.rules.expert import EXPERT, EXPERT_LARGE, LARGE_TABLE
from tests.bench import bees, paired

_playing: list[GameState] = []  # the game being played, as the engine last showed it
_true: list[batch.Ints] = []  # the other seats' true hands, for the decision being made
_deal_hidden = batch.deal_hidden


def _watching_view_for(state: GameState, seat: int) -> BeeView:
    _playing[:] = [state]
    return view_for(state, seat)


def _true_deal(
    unseen: batch.Ints, deals: int, hands: int, size: int, rng: np.random.Generator
) -> batch.Ints:
    if not _true:
        return _deal_hidden(unseen, deals, hands, size, rng)
    return np.broadcast_to(_true[0], (deals, hands, size)).copy()


def clairvoyant(view: BeeView, seed: bytes) -> int:
    """The expert's pick with every imagined deal the true one."""
    state = _playing[0]
    others = [s for s in state.seats if s.number != view.seat and not s.left]
    _true[:] = [np.array([sorted(s.hand) for s in others], dtype=np.int64)]
    try:
        how = EXPERT_LARGE if view.players >= LARGE_TABLE else EXPERT
        return batch.search(view, seed, how)[0]
    finally:
        _true.clear()


def main(argv: list[str] | None = None) -> int:
    simulate.__dict__["view_for"] = _watching_view_for  # what `play_game` shows the seats
    batch.deal_hidden = _true_deal
    bees.SEEDED["clairvoyant"] = clairvoyant
    bees.LABEL["clairvoyant"] = "clairvoyant"
    return paired.main(argv)


if __name__ == "__main__":
    sys.exit(main())
