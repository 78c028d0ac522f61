"""Whole games played by policies, for tests, benchmarks and measuring the bee players.

The caller brings the randomness (a `random.Random`), as everywhere in the rules.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from service.domain.rules.bees import BEE_NAMES, BeeView, choose_bee, view_for
from service.domain.rules.cards import deck
from service.domain.rules.commands import Command, ConfirmPick, StartGame, TakeStem
from service.domain.rules.engine import GameState, decide_and_evolve, initial_state
from service.domain.rules.events import Event, SeatInfo

Policy = Callable[[BeeView], int]


def random_policy(rng: random.Random) -> Policy:
    return lambda view: rng.choice(view.hand)


def bee_seats(players: int) -> tuple[SeatInfo, ...]:
    return tuple(
        SeatInfo(seat=i + 1, name=BEE_NAMES[i % len(BEE_NAMES)], kind="bee") for i in range(players)
    )


def shuffled_deck(players: int, rng: random.Random) -> tuple[int, ...]:
    order = list(deck(players))
    rng.shuffle(order)
    return tuple(order)


def play_game(
    seats: Sequence[SeatInfo],
    policies: Sequence[Policy],
    rng: random.Random,
    choose_stem: Callable[[GameState, int], int] | None = None,
) -> tuple[GameState, list[Event]]:
    """Play one game where every seat picks with its policy. `choose_stem` decides for the
    people's too-low bees (bee seats take the cheapest by rule)."""
    players = len(seats)
    log: list[Event] = []
    state = initial_state

    def run(command: Command) -> None:
        nonlocal state
        state, events = decide_and_evolve(command, state)
        log.extend(events)

    run(
        StartGame(
            game_id="sim",
            table_id="sim",
            seats=tuple(seats),
            deck_order=shuffled_deck(players, rng),
        )
    )
    while state.phase != "ended":
        if state.phase == "choosing":
            assert state.pending is not None and choose_stem is not None
            run(TakeStem(seat=state.pending.seat, stem=choose_stem(state, state.pending.seat)))
            continue
        for seat in state.seats:
            if seat.playing and seat.confirmed is None and state.phase == "picking":
                bee = policies[seat.number - 1](view_for(state, seat.number))
                run(ConfirmPick(seat=seat.number, bee=bee))
    return state, log


def heuristic_vs_random(players: int, games: int, seed: int = 0) -> tuple[float, float]:
    """Average stings of one heuristic bee (seat 1) and of the random seats, over `games`."""
    rng = random.Random(seed)
    heuristic_total = 0
    random_total = 0
    policies: list[Policy] = [choose_bee] + [random_policy(rng)] * (players - 1)
    for _ in range(games):
        state, _ = play_game(bee_seats(players), policies, rng)
        heuristic_total += state.seats[0].stings
        random_total += sum(s.stings for s in state.seats[1:])
    return heuristic_total / games, random_total / (games * (players - 1))
