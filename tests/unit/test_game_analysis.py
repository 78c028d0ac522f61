"""A whole game of one seat against the expert (`analysis.analyse_game`): one answer a turn the
seat began with bees in hand, each `analyse_turn`'s; a pick's cost is its estimate less the
expert pick's, never below 0; the costliest turns first; refused before the end and for a seat
the game does not have."""

from __future__ import annotations

import random

import pytest

from service.domain.analysis import (
    BeeEstimate,
    TurnAnalysis,
    analyse_game,
    analyse_turn,
    game_analysis,
    seat_turns,
)
from service.domain.rules.errors import GameNotOver, SeatNotPlaying
from service.domain.rules.events import PickConfirmed
from service.domain.rules.heuristic import choose_bee
from service.domain.rules.simulate import bee_seats, play_game

SMALL = 20_000  # a budget that keeps this fast; the code path is the same as expert.WORK's


def _turn(turn: int, played: int | None, pick: int, stings: dict[int, float]) -> TurnAnalysis:
    return TurnAnalysis(
        game_id="g",
        seat=1,
        turn=turn,
        level="expert",
        hand=sorted(stings),
        stems=[[1], [2], [3], [4]],
        pick=pick,
        played=played,
        estimates=[BeeEstimate(bee=b, stings=s, win=0.5, samples=9) for b, s in stings.items()],
    )


def test_a_pick_costs_its_estimate_less_the_expert_s_and_the_costliest_turns_come_first() -> None:
    turns = [
        _turn(1, 10, 10, {10: 5.0, 20: 6.0}),
        _turn(2, 20, 30, {20: 6.5, 30: 4.25}),  # 2.25
        _turn(3, 40, 50, {40: 3.0, 50: 3.5}),  # its estimate was lower: 0, not -0.5
        _turn(4, 60, 70, {60: 2.0, 70: 1.5}),  # 0.5
        _turn(5, None, 80, {80: 1.0, 90: 2.0}),  # left during the turn: no cost
        _turn(6, 91, 92, {91: 1.2, 92: 0.1}),  # 1.1
        _turn(7, 93, 94, {93: 0.3, 94: 0.2}),  # 0.1: a fourth costly turn, not among the worst
    ]
    review = game_analysis("g", 1, turns)
    assert [t.cost for t in review.turns] == [0.0, 2.25, 0.0, 0.5, None, 1.1, 0.1]
    assert (review.turns[1].played_stings, review.turns[1].pick_stings) == (6.5, 4.25)
    assert review.turns[4].played_stings is None and review.turns[4].pick_stings == 1.0
    assert review.cost == 3.95
    assert review.worst == [2, 6, 4]


def test_every_turn_of_a_seat_is_analyse_turn_s_answer() -> None:
    rng = random.Random(7)
    _, events = play_game(bee_seats(3), [choose_bee] * 3, rng)
    assert seat_turns(events, 2) == list(range(1, 11))
    review = analyse_game("g", events, 2, SMALL)
    plays = [e.bee for e in events if isinstance(e, PickConfirmed) and e.seat == 2]
    assert [t.played for t in review.turns] == plays
    for t in review.turns[:3]:
        alone = analyse_turn("g", events, 2, t.turn, SMALL)
        stings = {e.bee: e.stings for e in alone.estimates}
        assert (t.pick, t.pick_stings, t.played_stings) == (
            alone.pick,
            stings[alone.pick],
            stings[t.played or 0],
        )
    assert review == analyse_game("g", events, 2, SMALL)  # deterministic


def test_no_review_before_the_end_or_of_a_seat_the_game_does_not_have() -> None:
    rng = random.Random(8)
    _, events = play_game(bee_seats(3), [choose_bee] * 3, rng)
    with pytest.raises(GameNotOver):
        analyse_game("g", events[: len(events) // 2], 1, SMALL)
    for seat in (0, 4):
        with pytest.raises(SeatNotPlaying):
            analyse_game("g", events, seat, SMALL)
