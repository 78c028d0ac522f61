"""Views and visible events (service.domain.views) over random whole games: every bee comes
with its stings, the result is keyed by seat, and nobody (a spectator least of all) sees a bee
the rules hide; once the game ends every viewer sees the same, whole events."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.domain.rules.cards import stings
from service.domain.rules.engine import GameState, evolve, initial_state
from service.domain.rules.events import (
    BeeTapped,
    Event,
    GameEnded,
    GameStarted,
    PickConfirmed,
    SeatInfo,
)
from service.domain.rules.simulate import bee_seats, play_game, random_policy
from service.domain.views import (
    VisibleBeeTapped,
    VisibleGameStarted,
    VisiblePickConfirmed,
    game_view,
    visible_event,
)


def _json(value: object) -> Any:
    """What a client receives: the value as JSON, decoded."""
    return msgspec.json.decode(msgspec.json.encode(value))


games = st.tuples(st.integers(2, 8), st.integers(0, 2**32 - 1))


def _played(players: int, seed: int) -> tuple[list[GameState], list[Event]]:
    rng = random.Random(seed)
    seats = bee_seats(players)
    _, log = play_game(seats, [random_policy(rng)] * players, rng)
    states, state = [], initial_state
    for event in log:
        state = evolve(state, event)
        states.append(state)
    return states, log


def _assert_stings_beside_every_bee(state: GameState, viewer: int | None) -> None:
    view = game_view(state, viewer)
    assert view.hand_stings == tuple(stings(b) for b in view.hand)
    for stem in view.stems:
        assert stem.bee_stings == tuple(stings(b) for b in stem.bees)
        assert stem.stings == sum(stem.bee_stings)
    for seat in view.seats:
        assert seat.pile_stings == tuple(stings(b) for b in seat.pile)
        assert len(seat.pile) == seat.bees_taken
    assert all(p.stings == stings(p.bee) for p in view.last_picks)
    assert all(f.stings == stings(f.bee) for f in view.forecast)
    if view.choice is not None:
        assert view.choice.stings == stings(view.choice.bee)
    if view.result is not None:
        assert [s.seat for s in view.result.scores] == [s.seat for s in view.seats]
        for score, seat in zip(view.result.scores, view.seats, strict=True):
            assert score.stings == seat.stings == view.result.stings[score.seat - 1]
            assert score.winner == (score.seat in view.result.winners)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(games)
def test_every_bee_in_a_view_has_its_stings_and_the_result_is_keyed_by_seat(
    game: tuple[int, int],
) -> None:
    players, seed = game
    states, _ = _played(players, seed)
    for state in states[1::3] + states[-1:]:
        for viewer in (None, *range(1, players + 1)):
            _assert_stings_beside_every_bee(state, viewer)


def _bees_shown(event: Event, viewer: int | None) -> tuple[list[Any], list[Any]]:
    """(what the viewer may see of the hidden fields, what they must not), before the end."""
    shown = visible_event(event, viewer, game_over=False)
    if isinstance(event, GameStarted):
        assert isinstance(shown, VisibleGameStarted)
        mine = [h for s, h in zip(event.seats, shown.hands, strict=True) if s.seat == viewer]
        others = [h for s, h in zip(event.seats, shown.hands, strict=True) if s.seat != viewer]
        return mine, others
    if isinstance(event, BeeTapped):
        assert isinstance(shown, VisibleBeeTapped)
        return ([shown.bee], []) if event.seat == viewer else ([], [shown.bee])
    if isinstance(event, PickConfirmed):
        assert isinstance(shown, VisiblePickConfirmed)
        fields = [shown.bee, shown.by_clock]
        return (fields, []) if event.seat == viewer else ([], fields)
    assert shown is event  # hides nothing: passed through whole
    return [], []


@settings(max_examples=25, deadline=None)
@given(games)
def test_visible_events_hide_other_hands_and_picks_until_the_end(game: tuple[int, int]) -> None:
    players, seed = game
    _, log = _played(players, seed)
    assert any(isinstance(e, BeeTapped | PickConfirmed) for e in log)
    for event in log:
        for viewer in (None, *range(1, players + 1)):
            mine, others = _bees_shown(event, viewer)
            assert all(value is None for value in others), (event, viewer)
            assert all(value is not None for value in mine), (event, viewer)
            # Once the game is over everyone, spectators too, sees the event whole and in the
            # same shape.
            after = _json(visible_event(event, viewer, game_over=True))
            assert after == _json(event)
    assert isinstance(log[-1], GameEnded) or any(isinstance(e, GameEnded) for e in log)


def test_a_spectator_sees_no_hand_and_no_forecast() -> None:
    states, _ = _played(4, 7)
    state = next(s for s in states if s.phase == "picking")
    view = game_view(state, None)
    assert view.you is None and view.hand == () and view.forecast == ()
    assert view.tapped is None and view.confirmed is None
    seated = game_view(state, 2)
    assert seated.you == 2 and len(seated.hand) == 10 and len(seated.forecast) == 10


def test_a_redacted_pick_is_null_not_absent() -> None:
    """A client decodes one shape per type: the hidden fields are there, as null."""
    event = PickConfirmed(seat=2, bee=40, by_clock="lowest")
    shown = _json(visible_event(event, 1, game_over=False))
    assert shown == {"type": "pick_confirmed", "seat": 2, "bee": None, "by_clock": None}
    started = GameStarted(
        game_id="g",
        table_id="t",
        seats=(SeatInfo(seat=1, name="A", kind="person"), SeatInfo(seat=2, name="B", kind="bee")),
        hands=((1, 2), (3, 4)),
        stems=(5, 6, 7, 8),
    )
    hidden = _json(visible_event(started, None, game_over=False))
    assert hidden["hands"] == [None, None]
    assert set(hidden) == set(_json(started))


def test_a_redacted_event_is_the_same_bytes_whatever_it_hides() -> None:
    """No size channel: another seat's tap or pick encodes to the very same bytes for every bee
    and clock play, and the deal to the same bytes for every other seat's hand."""
    other = 2
    for viewer in (1, None):
        taps = {
            msgspec.json.encode(visible_event(BeeTapped(seat=other, bee=bee), viewer, False))
            for bee in range(1, 85)
        }
        picks = {
            msgspec.json.encode(
                visible_event(PickConfirmed(seat=other, bee=bee, by_clock=play), viewer, False)
            )
            for bee in range(1, 85)
            for play in ("none", "tapped", "lowest")
        }
        assert len(taps) == 1 and len(picks) == 1, viewer
        deals = {
            msgspec.json.encode(
                visible_event(
                    GameStarted(
                        game_id="g",
                        table_id="t",
                        seats=(
                            SeatInfo(seat=1, name="A", kind="person", player_id="a"),
                            SeatInfo(seat=2, name="B", kind="bee", level="heuristic"),
                        ),
                        hands=((1, 2, 3, 4, 5, 6, 7, 8, 9, 10), hand),
                        stems=(21, 22, 23, 24),
                    ),
                    viewer,
                    False,
                )
            )
            for hand in ((11, 12, 13, 14, 15, 16, 17, 18, 19, 20), (2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
        }
        assert len(deals) == 1, viewer
