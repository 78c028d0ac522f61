"""Properties of every game: random deals and random legal play, 2 to 8 players, people and bees.

Each game is played through `decide` and folded event by event; the invariants are checked on
every intermediate state, not only between commands.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.domain.rules.bees import BEE_NAMES, choose_bee, view_for
from service.domain.rules.cards import STEM_CAPACITY, TURNS, deck, pile_stings, total_stings
from service.domain.rules.commands import (
    Command,
    ConfirmPick,
    LeaveGame,
    StartGame,
    TakeStem,
    TapBee,
)
from service.domain.rules.engine import (
    GameState,
    decide,
    evolve,
    fold,
    initial_state,
    is_terminal,
    landing_stem,
    winners_of,
)
from service.domain.rules.events import (
    BeeLanded,
    Event,
    GameEnded,
    PicksRevealed,
    SeatInfo,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
    decode_event,
    encode_event,
)


@dataclass
class Game:
    players: int
    state: GameState = initial_state
    log: list[Event] = field(default_factory=list)
    # each turn: (stems before the bees flew, revealed picks, too-low bees of that turn)
    turns: list[tuple[tuple[tuple[int, ...], ...], PicksRevealed, list[int]]] = field(
        default_factory=list
    )

    def run(self, command: Command) -> None:
        for event in decide(command, self.state):
            if isinstance(event, PicksRevealed):
                self.turns.append((self.state.stems, event, []))
            if isinstance(event, StemChoiceRequired):
                self.turns[-1][2].append(event.bee)
            if (
                isinstance(event, StemTaken)
                and event.chosen_by == "rule"
                and (not self.turns[-1][2] or self.turns[-1][2][-1] != event.bee)
            ):
                self.turns[-1][2].append(event.bee)
            self.log.append(event)
            self.state = evolve(self.state, event)
            check_every_state(self.state, self.players, event)


def seats_for(kinds: list[bool]) -> tuple[SeatInfo, ...]:
    seats = []
    bees = 0
    for number, is_bee in enumerate(kinds, start=1):
        if is_bee:  # 7 names; an all-bee table of 8 (a simulation) reuses the first
            seats.append(SeatInfo(seat=number, name=BEE_NAMES[bees % len(BEE_NAMES)], kind="bee"))
            bees += 1
        else:
            seats.append(
                SeatInfo(seat=number, name=f"P{number}", kind="person", player_id=f"p{number}")
            )
    return tuple(seats)


def check_every_state(state: GameState, players: int, event: Event) -> None:
    # every bee is in exactly one place: hands, stems, piles, or in flight
    places = (
        [b for s in state.seats for b in s.hand]
        + [b for stem in state.stems for b in stem]
        + [b for s in state.seats for b in s.pile]
        + [p.bee for p in state.in_flight]
    )
    assert sorted(places) == list(deck(players))
    # stings are conserved
    held = sum(s.stings for s in state.seats)
    on_stems = sum(pile_stings(stem) for stem in state.stems)
    in_hands = sum(pile_stings(s.hand) for s in state.seats)
    flying = pile_stings([p.bee for p in state.in_flight])
    assert held + on_stems + in_hands + flying == total_stings(players)
    assert all(s.stings == pile_stings(s.pile) for s in state.seats)
    # no stem holds more than 5, ever; every stem holds at least one bee
    assert all(1 <= len(stem) <= STEM_CAPACITY for stem in state.stems)
    finished = isinstance(event, GameEnded) and event.reason == "finished"
    if isinstance(event, TurnStarted) or finished:
        # a turn is over: every revealed bee has landed
        assert state.in_flight == ()
        assert state.pending is None
    if state.pending is not None:
        assert state.in_flight[0] == state.pending


def play(
    players: int,
    kinds: list[bool],
    order: list[int],
    seed: int,
    leave_chance: float = 0.0,
) -> Game:
    rng = random.Random(seed)
    game = Game(players)
    game.run(StartGame(game_id="g", table_id="t", seats=seats_for(kinds), deck_order=tuple(order)))
    while not is_terminal(game.state):
        state = game.state
        if state.phase == "choosing":
            assert state.pending is not None
            if rng.random() < leave_chance:
                game.run(LeaveGame(seat=state.pending.seat))
            else:
                game.run(TakeStem(seat=state.pending.seat, stem=rng.randint(1, 4)))
            continue
        assert state.phase == "picking"
        waiting = [s for s in state.seats if s.playing and s.confirmed is None]
        seat = rng.choice(waiting)
        if not seat.is_bee and rng.random() < leave_chance:
            game.run(LeaveGame(seat=seat.number))
        elif seat.is_bee:
            game.run(ConfirmPick(seat=seat.number, bee=choose_bee(view_for(state, seat.number))))
        else:
            roll = rng.random()
            if roll < 0.3:
                game.run(TapBee(seat=seat.number, bee=rng.choice(seat.hand)))
            elif roll < 0.5 and seat.tapped is not None:
                game.run(ConfirmPick(seat=seat.number))
            else:
                game.run(ConfirmPick(seat=seat.number, bee=rng.choice(seat.hand)))
    return game


# (players, which seats are bees, the shuffled deck); the play itself draws from a seeded Random
tables = st.integers(min_value=2, max_value=8).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.permutations(list(deck(n))),
    )
)
seeds = st.integers(min_value=0, max_value=2**32 - 1)
Table = tuple[int, list[bool], list[int]]


@pytest.mark.slow
@settings(deadline=None, max_examples=100)
@given(table=tables, seed=seeds)
def test_property_a_game_always_ends_after_exactly_10_turns_with_all_hands_empty(
    table: Table, seed: int
) -> None:
    players, kinds, order = table
    game = play(players, kinds, order, seed)
    state = game.state
    assert [e.turn for e in game.log if isinstance(e, TurnStarted)] == list(range(1, TURNS + 1))
    assert [e.turn for e in game.log if isinstance(e, PicksRevealed)] == list(range(1, TURNS + 1))
    assert all(len(e.picks) == players for e in game.log if isinstance(e, PicksRevealed))
    assert isinstance(game.log[-1], GameEnded)
    assert sum(isinstance(e, GameEnded) for e in game.log) == 1
    assert state.turn == TURNS
    assert all(s.hand == () for s in state.seats)
    ended = game.log[-1]
    assert ended.reason == "finished"
    assert ended.stings == tuple(s.stings for s in state.seats)
    assert sum(ended.stings) + sum(pile_stings(stem) for stem in state.stems) == total_stings(
        players
    )
    fewest = min(ended.stings)
    assert ended.winners == tuple(n for n, s in enumerate(ended.stings, start=1) if s == fewest)
    assert ended.winners == winners_of(state.seats) == state.winners


@pytest.mark.slow
@settings(deadline=None, max_examples=100)
@given(table=tables, seed=seeds)
def test_property_at_most_one_bee_a_turn_is_too_low_and_it_is_that_turns_lowest(
    table: Table, seed: int
) -> None:
    players, kinds, order = table
    game = play(players, kinds, order, seed)
    assert len(game.turns) == TURNS
    for stems_before, revealed, too_low in game.turns:
        lowest = revealed.picks[0].bee
        bees = [p.bee for p in revealed.picks]
        assert bees == sorted(bees)
        assert len(too_low) <= 1
        if too_low:
            assert too_low == [lowest]
        # and it is too low exactly when the lowest bee is below every top before the turn
        assert bool(too_low) == (landing_stem(stems_before, lowest) is None)
    too_low_events = [e for e in game.log if isinstance(e, StemTaken)]
    for taken in too_low_events:
        seat = game.state.seat(taken.seat)
        assert taken.chosen_by == ("rule" if seat.is_bee else "player")
    for landed in (e for e in game.log if isinstance(e, BeeLanded)):
        assert len(landed.taken) in (0, STEM_CAPACITY)


@pytest.mark.slow
@settings(deadline=None, max_examples=60)
@given(table=tables, seed=seeds)
def test_property_folding_the_recorded_events_from_scratch_gives_exactly_the_live_state(
    table: Table, seed: int
) -> None:
    players, kinds, order = table
    game = play(players, kinds, order, seed, leave_chance=0.03)
    assert fold(game.log) == game.state
    # and so does folding them after a round trip through storage
    stored = [encode_event(e) for e in game.log]
    assert fold(decode_event(raw) for raw in stored) == game.state
    assert game.state.version == len(game.log)


@pytest.mark.slow
@settings(deadline=None, max_examples=60)
@given(table=tables, seed=seeds)
def test_property_bees_and_stings_are_conserved_even_when_people_leave(
    table: Table, seed: int
) -> None:
    players, kinds, order = table
    game = play(
        players, kinds, order, seed, leave_chance=0.05
    )  # check_every_state runs on each event
    ended = game.log[-1]
    assert isinstance(ended, GameEnded)
    left = {s.number for s in game.state.seats if s.left}
    assert not set(ended.winners) & left
    if ended.reason == "last_person_standing":
        staying = [s for s in game.state.seats if not s.is_bee and not s.left]
        assert ended.winners == (staying[0].number,)
    counted = Counter(b for s in game.state.seats for b in s.pile)
    assert all(n == 1 for n in counted.values())
