"""What knowing every hand is worth to the expert: a bound on information-set sampling (issue 45).

    python -m tests.bench.clairvoyant --players 4 --games 100 --first 3000 expert clairvoyant oracle

Diagnostics, never levels. `clairvoyant` is the expert's search told the true hidden hands
(every imagined deal is the real one: `batch.deal_hidden` replaced in this process); everything
else, the models of how the others pick included, is the expert's. Sampling the hidden hands by
how likely they make the others' past picks can at best come near this, so if the clairvoyant
expert wins little more than the expert, such sampling is not worth building. `oracle` is told
the true hands and the bee every other seat is about to play this turn (each other seat's own
policy asked first, with the seed it will be given: `batch.mcs_tables`' pick table replaced by
one that holds exactly those bees), its later turns still the expert's models: what a perfect
model of the others' next bee would be worth. The arguments are `tests.bench.paired`'s (the
same deals, only seat 1 changed); `--against` must be a seeded policy of `tests.bench.bees`.
"""

from __future__ import annotations

import sys

import numpy as np

from service.domain.rules import batch, simulate
from service.domain.rules.bees import BeeView, bee_decision_seed, view_for
from service.domain.rules.engine import GameState
from service.domain.rules.expert import EXPERT, EXPERT_LARGE, LARGE_TABLE
from tests.bench import bees, paired

_playing: list[GameState] = []  # the game being played, as the engine last showed it
_true: list[batch.Ints] = []  # the other seats' true hands, for the decision being made
_picks: dict[int, int] = {}  # the bees the other seats will play this turn, for the oracle
_game: list[str] = []  # the game id the bench's seats are deciding in
_mcs_tables = batch.mcs_tables
_timed_call = bees.Timed.__call__
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


def _watching_timed_call(self: bees.Timed, view: BeeView) -> int:
    _game[:] = [self.game_id]
    return _timed_call(self, view)


def _oracle_tables(
    pool: batch.Ints,
    seats: int,
    size: int,
    tops: batch.Ints,
    lens: batch.Ints,
    sums: batch.Ints,
    playouts: int,
    rng: np.random.Generator,
) -> batch.McsTable:
    tables = _mcs_tables(pool, seats, size, tops, lens, sums, playouts, rng)
    if not _picks:
        return tables
    # every other seat's true bee far below the rest of its hand: no noise reaches past it
    pick = np.where(np.isfinite(tables.pick), 1000.0, np.inf)
    pick[list(_picks.values())] = -1000.0
    return batch.McsTable(pick, tables.later)


def oracle(view: BeeView, seed: bytes) -> int:
    """The expert's pick told the true hands and the others' bees this turn."""
    state = _playing[0]
    turn = 11 - len(view.hand)
    for other in state.seats:
        if other.number != view.seat and not other.left:
            theirs = bee_decision_seed(bees.BENCH_SERVER_SEED, _game[0], other.number, turn, "pick")
            _picks[other.number] = bees.SEEDED[_against[0]](view_for(state, other.number), theirs)
    try:
        return clairvoyant(view, seed)
    finally:
        _picks.clear()


_against: list[str] = []


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
    bees.Timed.__call__ = _watching_timed_call  # type: ignore[method-assign]
    batch.mcs_tables = _oracle_tables
    args = sys.argv[1:] if argv is None else argv
    _against[:] = [args[args.index("--against") + 1] if "--against" in args else "mcs"]
    for name, policy in (("clairvoyant", clairvoyant), ("oracle", oracle)):
        bees.SEEDED[name] = policy
        bees.LABEL[name] = name
    return paired.main(argv)


if __name__ == "__main__":
    sys.exit(main())
