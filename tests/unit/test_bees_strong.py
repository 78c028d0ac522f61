"""The strong bee and the levels: deterministic given a seed, blind to the hands it must not see,
and recorded in the seat."""

from __future__ import annotations

import hashlib
import hmac
from itertools import pairwise

import pytest
from msgspec.structs import replace

from service.domain.rules import strong
from service.domain.rules.bees import (
    BEE_LEVELS,
    DEFAULT_LEVEL,
    bee_commands,
    bee_decision_seed,
    choose,
    decision_seeds,
    view_for,
)
from service.domain.rules.cards import deck, pile_stings, total_stings
from service.domain.rules.commands import ConfirmPick, LeaveGame, StartGame
from service.domain.rules.engine import GameState, decide, fold, initial_state
from service.domain.rules.events import BeeLevel, SeatInfo, decode_event, encode_event
from service.domain.rules.simulate import bee_seats

SERVER_SEED = bytes(range(32))


def _seats(players: int, level: BeeLevel | None = None) -> tuple[SeatInfo, ...]:
    return tuple(replace(info, level=level) for info in bee_seats(players))


def _started(players: int, order: list[int], level: BeeLevel | None = None) -> GameState:
    command = StartGame(
        game_id="g", table_id="t", seats=_seats(players, level), deck_order=tuple(order)
    )
    return fold(decide(command, initial_state))


def _interleaved(players: int) -> list[int]:
    """A deal where every hand holds bees from all over the deck (seat s: s, s + n, s + 2n, …)."""
    size = len(deck(players))
    return [b for s in range(1, players + 1) for b in range(s, 10 * players + 1, players)] + [
        b for b in range(10 * players + 1, size + 1)
    ]


def _advance(state: GameState, turns: int) -> GameState:
    """Play until turn `turns + 1` starts, every seat at its heuristic."""
    while state.turn <= turns and state.phase == "picking":
        for command in bee_commands(state, levels=dict.fromkeys(range(1, 9), "heuristic")):
            state = fold(decide(command, state), state)
    return state


def _swap_hands(state: GameState, first: int, second: int) -> GameState:
    """Swap the lower half of seat `first`'s hand with the upper half of seat `second`'s: the
    same public history, other hidden hands."""
    a, b = state.seat(first).hand, state.seat(second).hand
    half = len(a) // 2
    new_a = tuple(sorted(b[len(b) - half :] + a[half:]))
    new_b = tuple(sorted(a[:half] + b[: len(b) - half]))
    seats = list(state.seats)
    seats[first - 1] = replace(seats[first - 1], hand=new_a)
    seats[second - 1] = replace(seats[second - 1], hand=new_b)
    return replace(state, seats=tuple(seats))


def test_the_levels_and_the_default() -> None:
    assert BEE_LEVELS == ("easy", "medium", "hard", "expert")
    assert DEFAULT_LEVEL == "easy"


def test_the_decision_seed_is_the_documented_hmac() -> None:
    seed = bee_decision_seed(SERVER_SEED, "game-1", 3, 7, "pick")
    expected = hmac.new(SERVER_SEED, b"bee/game-1/3/7/pick", hashlib.sha256).digest()
    assert seed == expected
    assert seed.hex() == "830b7c1f05a6f45af761a91997716f3ba449e45cd6198e22198f4fbe056f113e"
    # every part of the decision changes the seed
    others = {
        bee_decision_seed(SERVER_SEED, "game-2", 3, 7, "pick"),
        bee_decision_seed(SERVER_SEED, "game-1", 4, 7, "pick"),
        bee_decision_seed(SERVER_SEED, "game-1", 3, 8, "pick"),
        bee_decision_seed(SERVER_SEED, "game-1", 3, 7, "stem"),
        bee_decision_seed(bytes(32), "game-1", 3, 7, "pick"),
    }
    assert seed not in others and len(others) == 5
    assert decision_seeds(SERVER_SEED, "game-1")(3, 7, "pick") == seed


@pytest.mark.parametrize(
    ("players", "turns"),
    [
        (3, 0),
        (4, 0),
        (4, 3),
        (5, 6),
        pytest.param(8, 2, marks=pytest.mark.slow),
        pytest.param(8, 8, marks=pytest.mark.slow),
    ],
)
def test_the_strong_bee_decides_the_same_whatever_the_other_hands_hold(
    players: int, turns: int
) -> None:
    state = _advance(_started(players, _interleaved(players)), turns)
    assert state.phase == "picking" and state.turn == turns + 1
    seat = 1
    others = list(range(2, players + 1))
    # the other hands, rearranged between each pair of neighbouring other seats (at 2 players
    # the one other hand is exactly the unseen bees: there is nothing to rearrange)
    variants = [state]
    for first, second in pairwise(others):
        variants.append(_swap_hands(state, first, second))
    assert len(variants) == players - 1
    for variant in variants[1:]:
        assert variant.seat(seat) == state.seat(seat)
        assert variant.stems == state.stems
        assert [s.pile for s in variant.seats] == [s.pile for s in state.seats]
        assert [s.hand for s in variant.seats] != [s.hand for s in state.seats]
    seed = bee_decision_seed(SERVER_SEED, "g", seat, state.turn, "pick")
    view = view_for(state, seat)
    decided = choose(view, "strong", seed)
    assert decided in state.seat(seat).hand
    for variant in variants:
        assert view_for(variant, seat) == view
        assert choose(view_for(variant, seat), "strong", seed) == decided
        commands = bee_commands(
            variant, levels={seat: "strong"}, seed_for=decision_seeds(SERVER_SEED, "g")
        )
        assert commands[0] == ConfirmPick(seat=seat, bee=decided)


@pytest.mark.slow
def test_the_strong_bee_is_deterministic_given_its_seed_and_uses_the_seed() -> None:
    state = _started(4, _interleaved(4))
    view = view_for(state, 2)
    seeds = [bee_decision_seed(SERVER_SEED, "g", 2, 1, f"try-{i}") for i in range(12)]
    first = [choose(view, "strong", seed) for seed in seeds]
    assert first == [choose(view, "strong", seed) for seed in seeds]
    # a tiny budget makes the choice depend on the sampled deals, so seeds must matter
    small = {strong.choose_bee_strong(view, seed, work=1) for seed in seeds}
    assert len(small) > 1


def test_the_strong_bee_needs_a_seed() -> None:
    state = _started(4, _interleaved(4), level="strong")
    view = view_for(state, 1)
    with pytest.raises(ValueError, match="seed"):
        choose(view, "strong")
    with pytest.raises(ValueError, match="seed_for"):
        bee_commands(state)


def test_bee_commands_plays_each_seat_at_its_recorded_level() -> None:
    seats = (
        SeatInfo(seat=1, name="Buzz", kind="bee", level="strong"),
        SeatInfo(seat=2, name="Bumble", kind="bee", level="heuristic"),
        SeatInfo(seat=3, name="Honey", kind="bee"),  # dealt before levels: the heuristic
    )
    state = fold(
        decide(
            StartGame(game_id="g", table_id="t", seats=seats, deck_order=tuple(_interleaved(3))),
            initial_state,
        )
    )
    asked: list[tuple[int, int, str]] = []

    def seed_for(seat: int, turn: int, kind: str) -> bytes:
        asked.append((seat, turn, kind))
        return bee_decision_seed(SERVER_SEED, "g", seat, turn, kind)

    commands = bee_commands(state, seed_for=seed_for)
    assert asked == [(1, 1, "pick")]  # only the strong seat draws a seed
    heuristic = bee_commands(state, levels=dict.fromkeys((1, 2, 3), "heuristic"))
    assert commands[1:] == heuristic[1:]
    assert commands[0] == ConfirmPick(
        seat=1, bee=choose(view_for(state, 1), "strong", seed_for(1, 1, "pick"))
    )
    # the level is part of the stored deal
    started = decide(
        StartGame(game_id="g", table_id="t", seats=seats, deck_order=tuple(_interleaved(3))),
        initial_state,
    )[0]
    assert decode_event(encode_event(started)) == started


def test_the_strong_bee_ignores_a_seat_that_left() -> None:
    seats = (
        SeatInfo(seat=1, name="Ann", kind="person", player_id="p1"),
        SeatInfo(seat=2, name="Bob", kind="person", player_id="p2"),
        SeatInfo(seat=3, name="Cat", kind="person", player_id="p3"),
        SeatInfo(seat=4, name="Buzz", kind="bee", level="strong"),
    )
    command = StartGame(game_id="g", table_id="t", seats=seats, deck_order=tuple(_interleaved(4)))
    state = fold(decide(command, initial_state))
    state = fold(decide(LeaveGame(seat=3), state), state)
    view = view_for(state, 4)
    assert view.left == frozenset({3})
    commands = bee_commands(state, seed_for=decision_seeds(SERVER_SEED, "g"))
    assert [c.seat for c in commands] == [4]
    assert commands[0].bee in state.seat(4).hand


@pytest.mark.parametrize("players", [3, pytest.param(8, marks=pytest.mark.slow)])
def test_whole_games_of_strong_bees_end_with_every_pick_legal(
    players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A smoke test of correctness (not strength): the strong level, on a small budget, on every
    seat through whole games."""
    monkeypatch.setattr(strong, "WORK", 2_000)
    monkeypatch.setattr(strong, "WORK_PER_SEAT", 0)
    state = _started(players, _interleaved(players), level="strong")
    seeds = decision_seeds(SERVER_SEED, "g")
    while state.phase == "picking":
        commands = bee_commands(state, seed_for=seeds)
        assert sorted(c.seat for c in commands) == list(range(1, players + 1))
        for command in commands:
            assert command.bee in state.seat(command.seat).hand
            state = fold(decide(command, state), state)
    assert state.phase == "ended" and state.turn == 10
    # every sting is on a pile or still on a stem
    on_stems = sum(pile_stings(stem) for stem in state.stems)
    assert sum(s.stings for s in state.seats) + on_stems == total_stings(players)
