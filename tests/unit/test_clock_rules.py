"""The clock (seed §7) as "given these events, this command yields these events".

Online, the service stores a timer for each deadline in `TurnStarted` / `StemChoiceRequired` and
sends `ExpireClock(deadline, at)` when it fires. The rules decide what the clock does:

- the tapped bee flies, confirmed or not; tap nothing and your lowest bee flies;
- too low: a choice with a 10-second deadline, or the cheapest stem is taken for you;
- the clock played your lowest and it is too low: the cheapest stem is taken at once;
- 3 turns in a row with nobody picking: the game ends, abandoned;
- a stale or early timer, or any timer of a solo (untimed) game, changes nothing.

The deals are those of `test_rules.py`:

    DEAL_T (2 players, bees 1–24): stems 5, 10, 15, 20
        seat 1: 1 3 6 7 11 12 16 17 21 22
        seat 2: 2 4 8 9 13 14 18 19 23 24
    DEAL_S (2 players, bees 1–24): stems 1, 12, 18, 22
        seat 1: 2 4 6 7 8 9 10 11 13 14
        seat 2: 3 5 15 16 17 19 20 21 23 24
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given as hypothesis_given
from hypothesis import settings
from msgspec.structs import replace

from service.domain.rules.bees import bee_commands
from service.domain.rules.cards import TURNS, pile_stings, total_stings
from service.domain.rules.commands import (
    Command,
    ConfirmPick,
    ExpireClock,
    LeaveGame,
    StartGame,
    TakeStem,
    TapBee,
)
from service.domain.rules.engine import (
    IDLE_TURNS_TO_ABANDON,
    GameState,
    awaiting,
    cheapest_stem,
    decide,
    evolve,
    fold,
    initial_state,
    is_terminal,
)
from service.domain.rules.events import (
    BeeLanded,
    BeeTapped,
    ClockSettings,
    Event,
    GameEnded,
    GameStarted,
    PickConfirmed,
    PicksRevealed,
    SeatInfo,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
    decode_event,
    encode_event,
)
from tests.unit.test_properties import Game, Table, seats_for, seeds, tables
from tests.unit.test_rules import (
    S_HANDS,
    S_STEMS,
    T_HANDS,
    T_STEMS,
    bee_player,
    order,
    people,
    person,
    picks,
)

# ---------------------------------------------------------------------------------------------
# Helpers

AT = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
TURN = timedelta(seconds=20)
CHOICE = timedelta(seconds=10)
D1 = AT + TURN  # the deadline of turn 1


def timed_deal(
    hands: Sequence[Sequence[int]] = T_HANDS,
    stems: Sequence[int] = T_STEMS,
    seats: tuple[SeatInfo, ...] | None = None,
) -> GameStarted:
    return GameStarted(
        game_id="g1",
        table_id="t1",
        seats=seats if seats is not None else people(len(hands)),
        hands=tuple(tuple(hand) for hand in hands),
        stems=tuple(stems),
        clock=ClockSettings(),
    )


def timed_start(
    hands: Sequence[Sequence[int]] = T_HANDS,
    stems: Sequence[int] = T_STEMS,
    seats: tuple[SeatInfo, ...] | None = None,
    clock: ClockSettings | None = None,
) -> StartGame:
    return StartGame(
        game_id="g1",
        table_id="t1",
        seats=seats if seats is not None else people(len(hands)),
        deck_order=order(hands, stems),
        clock=clock if clock is not None else ClockSettings(),
        at=AT,
    )


T_TIMED_TURN_1 = (timed_deal(), TurnStarted(turn=1, deadline=D1))
S_TIMED_TURN_1 = (timed_deal(S_HANDS, S_STEMS), TurnStarted(turn=1, deadline=D1))


def given(*events: Event) -> GameState:
    return fold(events)


def expire(state: GameState, late: timedelta = timedelta()) -> ExpireClock:
    """The timer of the running deadline fires (`late` after it)."""
    assert state.deadline is not None
    return ExpireClock(deadline=state.deadline, at=state.deadline + late)


class Table2:
    """A timed game driven like the service: each command, then the bee players pick."""

    def __init__(self, command: StartGame) -> None:
        self.state = initial_state
        self.log: list[Event] = []
        self.run(command)

    def run(self, command: Command) -> list[Event]:
        new = self._apply(command)
        while bees := bee_commands(self.state):
            for pick in bees:
                new += self._apply(ConfirmPick(seat=pick.seat, bee=pick.bee, at=command.at))
        return new

    def _apply(self, command: Command) -> list[Event]:
        events = decide(command, self.state)
        for event in events:
            self.state = evolve(self.state, event)
        self.log.extend(events)
        return events

    def expire(self) -> list[Event]:
        return self.run(expire(self.state))


# ---------------------------------------------------------------------------------------------
# The turn clock: the tapped bee flies, or your lowest


def test_rule_when_the_clock_runs_out_the_tapped_bee_flies_confirmed_or_not() -> None:
    state = given(
        *T_TIMED_TURN_1,
        BeeTapped(seat=1, bee=3),
        BeeTapped(seat=1, bee=11),  # the tap is changeable: the last one counts
        PickConfirmed(seat=2, bee=13),  # a confirmed pick flies as confirmed
    )
    events = decide(ExpireClock(deadline=D1, at=D1), state)
    assert events == [
        PickConfirmed(seat=1, bee=11, by_clock="tapped"),
        PicksRevealed(turn=1, picks=picks((1, 11), (2, 13))),
        BeeLanded(seat=1, bee=11, stem=2),
        BeeLanded(seat=2, bee=13, stem=2),
        TurnStarted(turn=2, deadline=D1 + TURN),
    ]
    after = fold(events, state)
    assert after.stems == ((5,), (10, 11, 13), (15,), (20,))
    assert after.seat(1).hand == (1, 3, 6, 7, 12, 16, 17, 21, 22)
    assert after.idle_turns == 0


def test_rule_when_the_clock_runs_out_every_tapped_bee_flies_and_none_was_confirmed() -> None:
    state = given(*T_TIMED_TURN_1, BeeTapped(seat=2, bee=8), BeeTapped(seat=1, bee=11))
    assert decide(ExpireClock(deadline=D1, at=D1), state)[:3] == [
        PickConfirmed(seat=1, bee=11, by_clock="tapped"),
        PickConfirmed(seat=2, bee=8, by_clock="tapped"),
        PicksRevealed(turn=1, picks=picks((2, 8), (1, 11))),
    ]


def test_rule_tap_nothing_and_your_lowest_bee_flies() -> None:
    state = given(*S_TIMED_TURN_1, PickConfirmed(seat=2, bee=15))
    events = decide(ExpireClock(deadline=D1, at=D1), state)
    assert events == [
        PickConfirmed(seat=1, bee=2, by_clock="lowest"),
        PicksRevealed(turn=1, picks=picks((1, 2), (2, 15))),
        BeeLanded(seat=1, bee=2, stem=1),
        BeeLanded(seat=2, bee=15, stem=2),
        TurnStarted(turn=2, deadline=D1 + TURN),
    ]
    assert fold(events, state).idle_turns == 0  # seat 2 picked


def test_rule_the_next_clock_starts_when_the_timer_fires_not_at_the_old_deadline() -> None:
    state = given(*S_TIMED_TURN_1, PickConfirmed(seat=2, bee=15))
    late = D1 + timedelta(milliseconds=700)
    events = decide(ExpireClock(deadline=D1, at=late), state)
    assert events[-1] == TurnStarted(turn=2, deadline=late + TURN)


def test_rule_a_bee_player_the_service_did_not_pick_for_plays_its_lowest_on_the_clock() -> None:
    state = given(
        timed_deal(S_HANDS, S_STEMS, seats=(person(1), bee_player(2))),
        TurnStarted(turn=1, deadline=D1),
        PickConfirmed(seat=1, bee=13),
    )
    assert decide(ExpireClock(deadline=D1, at=D1), state)[:2] == [
        PickConfirmed(seat=2, bee=3, by_clock="lowest"),
        PicksRevealed(turn=1, picks=picks((2, 3), (1, 13))),
    ]


# ---------------------------------------------------------------------------------------------
# Too low on the clock


def test_rule_too_low_gets_10_seconds_to_choose_or_the_cheapest_is_taken() -> None:
    # Seat 1 tapped 3, too low for every stem: the clock flies it, and seat 1 may still choose.
    state = given(*T_TIMED_TURN_1, BeeTapped(seat=1, bee=3), PickConfirmed(seat=2, bee=13))
    fired = D1 + timedelta(milliseconds=40)
    events = decide(ExpireClock(deadline=D1, at=fired), state)
    assert events == [
        PickConfirmed(seat=1, bee=3, by_clock="tapped"),
        PicksRevealed(turn=1, picks=picks((1, 3), (2, 13))),
        StemChoiceRequired(seat=1, bee=3, deadline=fired + CHOICE),
    ]
    choosing = fold(events, state)
    assert (choosing.phase, awaiting(choosing), choosing.deadline) == (
        "choosing",
        (1,),
        fired + CHOICE,
    )
    # 10 seconds later nobody has chosen: the cheapest stem (5: 2 stings, 1 bee, lowest number)
    events = decide(ExpireClock(deadline=fired + CHOICE, at=fired + CHOICE), choosing)
    assert events == [
        StemTaken(seat=1, bee=3, stem=1, taken=(5,), chosen_by="clock"),
        BeeLanded(seat=2, bee=13, stem=2),
        TurnStarted(turn=2, deadline=fired + CHOICE + TURN),
    ]
    after = fold(events, choosing)
    assert after.stems == ((3,), (10, 13), (15,), (20,))
    assert after.seat(1).stings == 2
    assert after.phase == "picking"


def test_rule_the_clocks_lowest_that_is_too_low_goes_first_and_the_others_land_on_it() -> None:
    state = given(*T_TIMED_TURN_1, PickConfirmed(seat=1, bee=3))
    events = decide(ExpireClock(deadline=D1, at=D1), state)
    assert events == [
        PickConfirmed(seat=2, bee=2, by_clock="lowest"),
        PicksRevealed(turn=1, picks=picks((2, 2), (1, 3))),
        # 2 is the lowest and too low, and the clock played it: no choice for seat 2
        StemTaken(seat=2, bee=2, stem=1, taken=(5,), chosen_by="clock"),
        # then 3 lands on 2, which now tops stem 1
        BeeLanded(seat=1, bee=3, stem=1),
        TurnStarted(turn=2, deadline=D1 + TURN),
    ]


def test_rule_clock_played_lowest_and_too_low_means_no_choice() -> None:
    state = given(*T_TIMED_TURN_1, PickConfirmed(seat=2, bee=13))
    events = decide(ExpireClock(deadline=D1, at=D1), state)
    assert events == [
        PickConfirmed(seat=1, bee=1, by_clock="lowest"),
        PicksRevealed(turn=1, picks=picks((1, 1), (2, 13))),
        StemTaken(seat=1, bee=1, stem=1, taken=(5,), chosen_by="clock"),
        BeeLanded(seat=2, bee=13, stem=2),
        TurnStarted(turn=2, deadline=D1 + TURN),
    ]
    after = fold(events, state)
    assert not any(isinstance(e, StemChoiceRequired) for e in events)
    assert after.stems == ((1,), (10, 13), (15,), (20,))
    assert after.seat(1).stings == 2
    assert after.phase == "picking"


def test_rule_choosing_in_time_stops_the_choice_clock() -> None:
    state = given(*T_TIMED_TURN_1, BeeTapped(seat=1, bee=3), PickConfirmed(seat=2, bee=13))
    choosing = fold(decide(ExpireClock(deadline=D1, at=D1), state), state)
    choice_deadline = choosing.deadline
    assert choice_deadline == D1 + CHOICE
    took = decide(TakeStem(seat=1, stem=4, at=D1 + timedelta(seconds=9)), choosing)
    assert took[0] == StemTaken(seat=1, bee=3, stem=4, taken=(20,), chosen_by="player")
    after = fold(took, choosing)
    assert decide(ExpireClock(deadline=choice_deadline, at=choice_deadline), after) == []


# ---------------------------------------------------------------------------------------------
# Abandonment: 3 turns in a row with nobody picking


def test_rule_three_turns_in_a_row_with_nobody_picking_abandon_the_game() -> None:
    table = Table2(timed_start(S_HANDS, S_STEMS))
    table.expire()
    assert table.state.idle_turns == 1
    table.expire()
    assert (table.state.turn, table.state.idle_turns) == (3, 2)
    state = table.state
    # the third idle turn is not played: the game ends at once, nobody wins
    assert decide(expire(state), state) == [
        GameEnded(
            stings=tuple(s.stings for s in state.seats),
            winners=(),
            reason="abandoned",
        )
    ]
    table.expire()
    assert is_terminal(table.state)
    assert (table.state.end_reason, table.state.winners, table.state.deadline) == (
        "abandoned",
        (),
        None,
    )
    assert table.state.seat(1).hand == (6, 7, 8, 9, 10, 11, 13, 14)  # 2 and 4 flew


def test_rule_a_turn_with_a_tap_resets_the_idle_count() -> None:
    table = Table2(timed_start(S_HANDS, S_STEMS))
    table.expire()
    table.expire()
    assert table.state.idle_turns == 2
    table.run(TapBee(seat=2, bee=table.state.seat(2).hand[-1], at=table.state.deadline))
    table.expire()  # a tap is a pick: the turn is played, the count starts again
    assert (table.state.turn, table.state.idle_turns) == (4, 0)
    table.expire()
    table.expire()
    assert (table.state.turn, table.state.idle_turns, table.state.phase) == (6, 2, "picking")
    table.expire()
    assert table.state.end_reason == "abandoned"
    assert sum(isinstance(e, PicksRevealed) for e in table.log) == 5


def test_rule_a_turn_with_a_confirm_resets_the_idle_count() -> None:
    table = Table2(timed_start(S_HANDS, S_STEMS))
    table.expire()
    table.expire()
    table.run(ConfirmPick(seat=1, bee=table.state.seat(1).hand[-1], at=table.state.deadline))
    table.expire()
    assert (table.state.turn, table.state.idle_turns) == (4, 0)


def test_rule_bee_players_picking_do_not_keep_an_idle_game_going() -> None:
    seats = (person(1), bee_player(2), bee_player(3), bee_player(4))
    table = Table2(
        StartGame(
            game_id="g1",
            table_id="t1",
            seats=seats,
            deck_order=tuple(range(44, 0, -1)),
            clock=ClockSettings(),
            at=AT,
        )
    )
    for _ in range(IDLE_TURNS_TO_ABANDON):
        table.expire()
    assert table.state.end_reason == "abandoned"
    assert table.state.turn == 3
    revealed = [e for e in table.log if isinstance(e, PicksRevealed)]
    assert [e.turn for e in revealed] == [1, 2]
    clock_picks = [e for e in table.log if isinstance(e, PickConfirmed) and e.by_clock != "none"]
    assert [(e.seat, e.by_clock) for e in clock_picks] == [(1, "lowest"), (1, "lowest")]


def test_a_game_where_nobody_ever_acts_ends_abandoned_after_3_turns() -> None:
    table = Table2(timed_start())
    while not is_terminal(table.state):
        table.expire()
    ended = table.log[-1]
    assert isinstance(ended, GameEnded)
    assert (ended.reason, ended.winners) == ("abandoned", ())
    assert [e.turn for e in table.log if isinstance(e, TurnStarted)] == [1, 2, 3]
    assert [e.turn for e in table.log if isinstance(e, PicksRevealed)] == [1, 2]
    assert ended.stings == tuple(s.stings for s in table.state.seats)


def test_a_game_where_one_person_acts_only_by_tapping_plays_all_10_turns() -> None:
    # Seat 1 taps its lowest bee every turn and never confirms or chooses; seat 2 never acts.
    table = Table2(timed_start())
    while not is_terminal(table.state):
        state = table.state
        if state.phase == "picking" and state.seat(1).tapped is None:
            table.run(TapBee(seat=1, bee=state.seat(1).hand[0], at=state.deadline))
        table.expire()
        assert table.state.idle_turns == 0
    ended = table.log[-1]
    assert isinstance(ended, GameEnded) and ended.reason == "finished"
    assert [e.turn for e in table.log if isinstance(e, PicksRevealed)] == list(range(1, TURNS + 1))
    assert all(s.hand == () for s in table.state.seats)
    by_seat = {
        seat: {e.by_clock for e in table.log if isinstance(e, PickConfirmed) and e.seat == seat}
        for seat in (1, 2)
    }
    assert by_seat == {1: {"tapped"}, 2: {"lowest"}}
    # seat 1's 1 and 3 were too low: each got a choice and the choice clock took the cheapest
    chosen = [e for e in table.log if isinstance(e, StemTaken)]
    assert chosen and all(e.chosen_by == "clock" for e in chosen)
    assert any(isinstance(e, StemChoiceRequired) for e in table.log)
    assert fold(table.log) == table.state


def test_the_idle_count_is_folded_from_the_events_so_a_replay_reproduces_it() -> None:
    table = Table2(timed_start(S_HANDS, S_STEMS))
    table.expire()
    table.expire()
    stored = [encode_event(e) for e in table.log]
    replayed = fold(decode_event(raw) for raw in stored)
    assert replayed == table.state
    assert replayed.idle_turns == 2


# ---------------------------------------------------------------------------------------------
# Timers that change nothing


def test_a_stale_expire_clock_yields_nothing_when_everyone_confirmed_in_time() -> None:
    state = given(*T_TIMED_TURN_1, PickConfirmed(seat=1, bee=11))
    state = fold(
        decide(ConfirmPick(seat=2, bee=8, at=D1 - timedelta(milliseconds=1)), state), state
    )
    assert state.turn == 2 and state.deadline != D1
    assert decide(ExpireClock(deadline=D1, at=D1), state) == []


def test_a_stale_expire_clock_yields_nothing_once_the_choice_is_made() -> None:
    state = given(
        *T_TIMED_TURN_1,
        PickConfirmed(seat=2, bee=13),
        PickConfirmed(seat=1, bee=3),
        PicksRevealed(turn=1, picks=picks((1, 3), (2, 13))),
        StemChoiceRequired(seat=1, bee=3, deadline=D1 + CHOICE),
    )
    # the turn's own deadline is not the running one while a choice is awaited
    assert decide(ExpireClock(deadline=D1, at=D1 + CHOICE), state) == []
    state = fold(decide(TakeStem(seat=1, stem=2, at=D1), state), state)
    assert decide(ExpireClock(deadline=D1 + CHOICE, at=D1 + CHOICE), state) == []


def test_an_expire_clock_that_fires_early_yields_nothing() -> None:
    state = given(*T_TIMED_TURN_1)
    assert decide(ExpireClock(deadline=D1, at=D1 - timedelta(milliseconds=1)), state) == []


def test_an_expire_clock_after_the_end_yields_nothing() -> None:
    table = Table2(timed_start())
    deadlines = []
    while not is_terminal(table.state):
        assert table.state.deadline is not None
        deadlines.append(table.state.deadline)
        table.expire()
    for deadline in deadlines:
        assert decide(ExpireClock(deadline=deadline, at=deadline), table.state) == []


def test_solo_expire_clock_yields_nothing() -> None:
    solo = (person(1), bee_player(2))
    state = given(
        GameStarted(
            game_id="g1", table_id="t1", seats=solo, hands=T_HANDS, stems=T_STEMS, clock=None
        ),
        TurnStarted(turn=1),
    )
    for at in (AT, D1, D1 + timedelta(hours=1)):
        assert decide(ExpireClock(deadline=at, at=at), state) == []
    state = fold([BeeTapped(seat=1, bee=3)], state)
    assert decide(ExpireClock(deadline=D1, at=D1), state) == []
    assert decide(ExpireClock(deadline=D1, at=D1), initial_state) == []


# ---------------------------------------------------------------------------------------------
# Property: random mixes of moves and clock expiries keep every invariant


def play_timed(players: int, kinds: list[bool], order_: list[int], seed: int) -> Game:
    """A timed game: people tap, confirm, choose, leave, or let the clock run out; stale and early
    timers fire too; the bee players pick like the service makes them (sometimes late)."""
    rng = random.Random(seed)
    game = Game(players)
    now = AT
    game.run(
        StartGame(
            game_id="g",
            table_id="t",
            seats=seats_for(kinds),
            deck_order=tuple(order_),
            clock=ClockSettings(),
            at=now,
        )
    )
    past: list[datetime] = []
    idle_style = rng.random() < 0.3  # some games have people who mostly do nothing
    while not is_terminal(game.state):
        state = game.state
        assert state.deadline is not None
        bees = bee_commands(state)
        if bees and rng.random() < 0.8:  # the service picks for them; now and then it is late
            game.run(replace(bees[0], at=now))
            continue
        # stale and early timers change nothing
        if past:
            stale = rng.choice(past)
            assert decide(ExpireClock(deadline=stale, at=now), state) == []
        assert now < state.deadline
        assert decide(ExpireClock(deadline=state.deadline, at=now), state) == []
        now += timedelta(seconds=rng.uniform(0.5, 6))
        if now >= state.deadline or (idle_style and rng.random() < 0.7):
            past.append(state.deadline)
            late = timedelta(milliseconds=rng.randint(0, 900))
            now = state.deadline + late
            events = decide(ExpireClock(deadline=state.deadline, at=now), state)
            assert events  # the running deadline always does something
            if isinstance(events[0], GameEnded):
                # abandoned: the third idle turn in a row is not played
                assert events == [
                    GameEnded(stings=events[0].stings, winners=(), reason="abandoned")
                ]
                assert state.idle_turns == IDLE_TURNS_TO_ABANDON - 1
            game.run(ExpireClock(deadline=state.deadline, at=now))
            continue
        if state.phase == "choosing":
            assert state.pending is not None
            if rng.random() < 0.05:
                game.run(LeaveGame(seat=state.pending.seat, at=now))
            else:
                game.run(TakeStem(seat=state.pending.seat, stem=rng.randint(1, 4), at=now))
            continue
        waiting = [s for s in state.seats if s.playing and s.confirmed is None and not s.is_bee]
        if not waiting:
            continue
        seat = rng.choice(waiting)
        roll = rng.random()
        if roll < 0.02:
            game.run(LeaveGame(seat=seat.number, at=now))
        elif roll < 0.5:
            game.run(TapBee(seat=seat.number, bee=rng.choice(seat.hand), at=now))
        else:
            game.run(ConfirmPick(seat=seat.number, bee=rng.choice(seat.hand), at=now))
    return game


@pytest.mark.slow
@settings(deadline=None, max_examples=100)
@hypothesis_given(table=tables, seed=seeds)
def test_property_moves_and_clock_expiries_keep_every_invariant(table: Table, seed: int) -> None:
    players, kinds, order_ = table
    game = play_timed(players, kinds, order_, seed)  # check_every_state runs on each event
    state = game.state
    # the live state is the fold of the events, also after a round trip through storage
    assert fold(game.log) == state
    assert fold(decode_event(encode_event(e)) for e in game.log) == state
    assert state.version == len(game.log)
    ended = game.log[-1]
    assert isinstance(ended, GameEnded)
    assert sum(isinstance(e, GameEnded) for e in game.log) == 1
    assert ended.stings == tuple(s.stings for s in state.seats)
    on_stems = sum(pile_stings(stem) for stem in state.stems)
    in_hands = sum(pile_stings(s.hand) for s in state.seats)  # a leaver keeps its hand
    flying = pile_stings([p.bee for p in state.in_flight])  # the end can cut a turn short
    assert sum(ended.stings) + on_stems + in_hands + flying == total_stings(players)
    if ended.reason == "finished":
        assert [e.turn for e in game.log if isinstance(e, PicksRevealed)] == list(
            range(1, TURNS + 1)
        )
        assert all(s.hand == () for s in state.seats if s.playing)
    if ended.reason == "abandoned":
        assert ended.winners == ()
    # how each too-low bee's stem was chosen
    by_clock: dict[tuple[int, int], str] = {}
    choice_asked: set[tuple[int, int]] = set()
    for event in game.log:
        if isinstance(event, PickConfirmed):
            by_clock[(event.seat, event.bee)] = event.by_clock
        if isinstance(event, StemChoiceRequired):
            choice_asked.add((event.seat, event.bee))
            # the clock's lowest never gets a choice
            assert by_clock[(event.seat, event.bee)] != "lowest"
        if isinstance(event, StemTaken):
            seat = state.seat(event.seat)
            if event.chosen_by == "clock" and (event.seat, event.bee) not in choice_asked:
                assert by_clock[(event.seat, event.bee)] == "lowest"
            if event.chosen_by == "player":
                assert not seat.is_bee
    # the clock's lowest is the lowest bee the seat held; its tapped bee is what it tapped last
    state_ = initial_state
    for event in game.log:
        if isinstance(event, PickConfirmed) and event.by_clock == "lowest":
            assert event.bee == state_.seat(event.seat).hand[0]
            assert state_.seat(event.seat).tapped is None
        if isinstance(event, PickConfirmed) and event.by_clock == "tapped":
            assert event.bee == state_.seat(event.seat).tapped
        state_ = evolve(state_, event)


def test_cheapest_stem_is_what_the_clock_takes() -> None:
    state = given(*T_TIMED_TURN_1, PickConfirmed(seat=2, bee=13))
    taken = next(
        e for e in decide(ExpireClock(deadline=D1, at=D1), state) if isinstance(e, StemTaken)
    )
    assert taken.stem == cheapest_stem(state.stems)
