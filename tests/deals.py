"""Deals built for a test: a `server_seeds` function for `create_app` that, for each game it is
asked about, searches (deterministically) for a server seed whose fair deal has the shape the
test needs. A test that needs a too-low bee gets one on every run, instead of hoping for it."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable

from service.domain import fairness
from service.domain.rules.cards import HAND_SIZE
from service.domain.rules.commands import Command, ConfirmPick, StartGame, TakeStem
from service.domain.rules.engine import cheapest_stem, decide_and_evolve, initial_state
from service.domain.rules.events import SeatInfo

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


def ties_when_lowest_played(hands: Hands, stems: Stems) -> bool:
    """Every person playing their lowest bee each turn and taking the cheapest stem when too
    low (as `tests.e2e.api_client.play_online_to_the_end` plays) ends in a shared win."""
    seats = tuple(
        SeatInfo(seat=n + 1, name=f"P{n + 1}", kind="person", player_id=f"p{n + 1}")
        for n in range(len(hands))
    )
    state, _ = decide_and_evolve(
        StartGame(
            game_id="g", table_id="t", seats=seats, deck_order=tuple(itertools.chain(*hands, stems))
        ),
        initial_state,
    )
    while state.phase != "ended":
        if state.phase == "choosing":
            assert state.pending is not None
            command: Command = TakeStem(seat=state.pending.seat, stem=cheapest_stem(state.stems))
        else:
            seat = next(s for s in state.seats if s.confirmed is None)
            command = ConfirmPick(seat=seat.number, bee=min(seat.hand))
        state, _ = decide_and_evolve(command, state)
    return len(state.winners) > 1
