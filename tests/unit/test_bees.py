"""The bee players (seed §8): named in order, they never look at other hands, and they play well."""

from __future__ import annotations

import random

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from service.domain.rules.bees import BEE_NAMES, BeeView, bee_commands, choose_bee, view_for
from service.domain.rules.cards import deck
from service.domain.rules.commands import ConfirmPick, StartGame, TakeStem
from service.domain.rules.engine import GameState, cheapest_stem, decide, fold, initial_state
from service.domain.rules.simulate import bee_seats, heuristic_vs_random


def test_rule_bees_are_named_buzz_bumble_honey_clover_pollen_nectar_waggle_in_order() -> None:
    assert BEE_NAMES == ("Buzz", "Bumble", "Honey", "Clover", "Pollen", "Nectar", "Waggle")


def test_rule_a_bee_view_has_no_field_for_other_hands() -> None:
    names = {f.name for f in msgspec.structs.fields(BeeView)}
    # `left` names the seats that have left, which every seat sees (`seat_left`); `stings`, every
    # seat's stings so far (its pile, public); `plays`, who plays each seat (a person, or a bee
    # of the level every view shows)
    assert names == {"seat", "players", "hand", "stems", "seen", "left", "stings", "plays"}


def _started(players: int, order: list[int]) -> GameState:
    command = StartGame(
        game_id="g", table_id="t", seats=bee_seats(players), deck_order=tuple(order)
    )
    return fold(decide(command, initial_state))


def _advance(state: GameState, turns: int) -> GameState:
    """Play `turns` turns with the bee players' own choices."""
    while state.turn <= turns and state.phase != "ended":
        if state.phase == "choosing":  # pragma: no cover - bee seats never choose
            assert state.pending is not None
            take = TakeStem(seat=state.pending.seat, stem=cheapest_stem(state.stems))
            state = fold(decide(take, state), state)
            continue
        for command in bee_commands(state):
            state = fold(decide(command, state), state)
    return state


def _shuffle_other_hands(state: GameState, seat: int, rng: random.Random) -> GameState:
    others = [s for s in state.seats if s.number != seat]
    pool = [b for s in others for b in s.hand]
    rng.shuffle(pool)
    seats = []
    for s in state.seats:
        if s.number == seat:
            seats.append(s)
        else:
            mine, pool = pool[: len(s.hand)], pool[len(s.hand) :]
            seats.append(replace(s, hand=tuple(sorted(mine))))
    return replace(state, seats=tuple(seats))


@settings(deadline=None, max_examples=60)
@given(
    table=st.integers(min_value=2, max_value=8).flatmap(
        lambda n: st.tuples(st.just(n), st.permutations(list(deck(n))))
    ),
    turns=st.integers(min_value=0, max_value=9),
    seat_pick=st.integers(min_value=0, max_value=7),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_rule_the_bee_player_never_looks_at_other_hands(
    table: tuple[int, list[int]], turns: int, seat_pick: int, seed: int
) -> None:
    players, order = table
    seat = seat_pick % players + 1
    state = _advance(_started(players, order), turns)
    other = _shuffle_other_hands(state, seat, random.Random(seed))
    # the two states differ only in the other seats' hands
    assert other.seat(seat) == state.seat(seat)
    assert other.stems == state.stems
    assert [s.pile for s in other.seats] == [s.pile for s in state.seats]
    view = view_for(state, seat)
    assert view_for(other, seat) == view
    assert choose_bee(view_for(other, seat)) == choose_bee(view)
    # nothing in the view names a bee of another hand
    others = {b for s in state.seats if s.number != seat for b in s.hand}
    assert not (view.seen | set(view.hand)) & others
    assert view.hand == state.seat(seat).hand


def test_the_bee_player_picks_a_bee_from_its_own_hand() -> None:
    state = _started(4, list(range(44, 0, -1)))
    commands = bee_commands(state)
    assert [c.seat for c in commands] == [1, 2, 3, 4]
    for command in commands:
        assert isinstance(command, ConfirmPick)
        assert command.bee in state.seat(command.seat).hand


def test_the_heuristic_bee_beats_random_play() -> None:
    heuristic, random_mean = heuristic_vs_random(4, 300)
    assert heuristic < 0.8 * random_mean
