"""The bees' fast simulators (`rollout.fly`, `rollout.fly_tops`) fly a turn exactly as the engine
does."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.domain.rules.bees import choose_bee, view_for
from service.domain.rules.cards import deck, pile_stings, stings
from service.domain.rules.commands import ConfirmPick, StartGame
from service.domain.rules.engine import GameState, cheapest_stem, decide, fold, initial_state
from service.domain.rules.rollout import STINGS, cheapest, fly, fly_tops
from service.domain.rules.simulate import bee_seats, shuffled_deck
from service.domain.rules.strong import quick_pick


def _compare_one_game(players: int, rng: random.Random, heuristic_seats: int) -> int:
    """Play one game with the engine, checking every turn's flight against `fly` and `fly_tops`;
    return the number of turns (positions) checked."""
    command = StartGame(
        game_id="g", table_id="t", seats=bee_seats(players), deck_order=shuffled_deck(players, rng)
    )
    state: GameState = fold(decide(command, initial_state))
    checked = 0
    while state.phase == "picking":
        picks = []
        for seat in state.seats:
            if seat.number <= heuristic_seats:
                bee = choose_bee(view_for(state, seat.number))
            else:
                bee = rng.choice(seat.hand)
            picks.append((bee, seat.number - 1))
        stems = [list(stem) for stem in state.stems]
        sums = [pile_stings(stem) for stem in state.stems]
        scores = [s.stings for s in state.seats]
        assert cheapest(stems, sums) == cheapest_stem(state.stems) - 1
        fly(stems, sums, scores, list(picks))
        tops = [stem[-1] for stem in state.stems]
        lens = [len(stem) for stem in state.stems]
        compact_sums = [pile_stings(stem) for stem in state.stems]
        compact_scores = [s.stings for s in state.seats]
        fly_tops(tops, lens, compact_sums, compact_scores, list(picks))
        for bee, index in picks:
            state = fold(decide(ConfirmPick(seat=index + 1, bee=bee), state), state)
        assert [tuple(stem) for stem in stems] == list(state.stems)
        assert sums == [pile_stings(stem) for stem in state.stems]
        assert scores == [s.stings for s in state.seats]
        assert tops == [stem[-1] for stem in state.stems]
        assert lens == [len(stem) for stem in state.stems]
        assert (compact_sums, compact_scores) == (sums, scores)
        checked += 1
    assert state.phase == "ended"
    return checked


@pytest.mark.slow
def test_the_fast_flight_matches_the_engine_on_thousands_of_random_turns() -> None:
    rng = random.Random(20261201)
    checked = 0
    for game in range(420):
        players = 2 + game % 7
        checked += _compare_one_game(players, rng, heuristic_seats=game % 3)
    assert checked == 4200


@pytest.mark.slow
@settings(deadline=None, max_examples=200)
@given(
    table=st.integers(min_value=2, max_value=8).flatmap(
        lambda n: st.tuples(st.just(n), st.randoms(use_true_random=False))
    )
)
def test_the_fast_flight_matches_the_engine_in_generated_games(
    table: tuple[int, random.Random],
) -> None:
    players, rng = table
    assert _compare_one_game(players, rng, heuristic_seats=1) == 10


def test_the_sting_table_is_the_rule() -> None:
    assert STINGS[0] == 0
    assert all(STINGS[bee] == stings(bee) for bee in deck(8))


def test_the_rollout_policy_plays_from_the_hand_and_avoids_a_sixth_bee() -> None:
    stems = [[10, 11, 12, 13, 14], [30], [50], [70]]
    sums = [pile_stings(stem) for stem in stems]
    # 15 would be the sixth bee on the first stem (9 stings); 31 is a tight fit on a short stem
    assert quick_pick([15, 31], stems, sums, 0.1) == 31
    # too low (5) costs the cheapest stem, 1 sting, less than the sixth bee's 9
    assert quick_pick([5, 15], stems, sums, 0.1) == 5
