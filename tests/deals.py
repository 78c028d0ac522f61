"""Deals built for a test: a `server_seeds` function for `create_app` that, for each game it is
asked about, searches (deterministically) for a server seed whose fair deal has the shape the
test needs. A test that needs a too-low bee gets one on every run, instead of hoping for it."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable

from service.domain import fairness
from service.domain.rules.cards import HAND_SIZE

Hands = tuple[tuple[int, ...], ...]
Stems = tuple[int, ...]
DealWanted = Callable[[Hands, Stems], bool]


def deal_of(order: tuple[int, ...], players: int) -> tuple[Hands, Stems]:
    """The hands (seat 1 first) and stem starters that `deck_order` deals (as the engine does)."""
    hands = tuple(tuple(order[i * HAND_SIZE : (i + 1) * HAND_SIZE]) for i in range(players))
    return hands, tuple(order[players * HAND_SIZE :])


def seeds_where(players: int, wanted: DealWanted) -> Callable[[str], bytes]:
    """Server seeds whose deal to `players` seats, none of them contributing a seed, is
    `wanted`. Every game the app prepares gets such a deal."""

    def server_seed(game_id: str) -> bytes:
        for n in itertools.count():
            seed = hashlib.sha256(f"{game_id}/{n}".encode()).digest()
            order = fairness.derive(game_id, seed, [None] * players).deck_order
            if wanted(*deal_of(order, players)):
                return seed
        raise AssertionError("unreachable")  # pragma: no cover

    return server_seed


def lowest_is_too_low(seat: int) -> DealWanted:
    """Seat `seat`'s lowest bee is lower than every stem: played, it is too low."""
    return lambda hands, stems: min(hands[seat - 1]) < min(stems)


def highest_bees_land(hands: Hands, stems: Stems) -> bool:
    """Every seat's highest bee lands on a stem (none is too low)."""
    return all(max(hand) > min(stems) for hand in hands)
