"""What a bee player may know when it picks: `BeeView`, built from a game's state by `view_for`.

A bee sees only what its seat may see (its own hand, the stems, the piles, the bees revealed so
far, who has left, who plays each seat), never another hand, so no level can cheat even by
accident. Every level's policy (`levels.py`) is a function of a `BeeView` and nothing else from
the game.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from service.domain.rules.cards import deck
from service.domain.rules.events import BeeLevel, SeatInfo, resolved
from service.domain.rules.state import GameState, Stems

# How a seat is known to choose: a person (anyone, as far as a bee can tell), or a bee level.
SeatPlay = Literal["person"] | BeeLevel


class BeeView(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one seat is allowed to know when it picks."""

    seat: int
    players: int
    hand: tuple[int, ...]
    stems: Stems
    seen: frozenset[int]  # bees whose place is public: on stems, in piles, already revealed
    # Seats that have left (public: `seat_left`): their hands are frozen and never play again.
    left: frozenset[int] = frozenset()
    # Every seat's stings so far, seat 1 first (public: the piles), for a level that plays for
    # the win rather than for its own fewest stings; empty where a caller has no scores.
    stings: tuple[int, ...] = ()
    # Who plays each seat, seat 1 first (public: every view shows a seat's kind and a bee's
    # level): "person", or the bee's level as it plays now (`seat_play`); empty where a caller has
    # none, which a level reads as every seat a person.
    plays: tuple[SeatPlay, ...] = ()


def seat_play(info: SeatInfo) -> SeatPlay:
    """How the seat `info` describes chooses its bees, as public as the seat itself."""
    return "person" if info.kind != "bee" else resolved(info.level)


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
        left=frozenset(s.number for s in state.seats if s.left),
        stings=tuple(s.stings for s in state.seats),
        plays=tuple(seat_play(s.info) for s in state.seats),
    )


def unseen_bees(view: BeeView) -> list[int]:
    """The bees this seat cannot place (they are in other hands), ascending."""
    mine = set(view.hand)
    return [b for b in deck(view.players) if b not in view.seen and b not in mine]
