"""The Decider's laws, on random games: a decision's state is the fold of its events, and a fold
is `evolve` one event at a time, over any split of the log.

`decide_and_evolve` applies each event it emits through the one applier (`fold.py`) as its
cascade goes on; these check that what it returns is exactly `fold(decide(c, s), s)` and that
folding a log in one call, event by event, or in two parts gives the same state. Random games
(2 to 8 seats, people and bee players, timed and untimed, taps, confirms of the tapped bee,
too-low choices, leaves, turn and choice clocks, stale and early timers, refused moves, a fair
deal's commitment and reveal) are played through `decide_and_evolve`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.domain.rules.bees import BEE_NAMES, choose_bee, view_for
from service.domain.rules.cards import STEM_COUNT, deck
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
    GameState,
    decide,
    decide_and_evolve,
    evolve,
    fold,
    initial_state,
)
from service.domain.rules.errors import RuleViolation
from service.domain.rules.events import (
    ClockSettings,
    DealCommitted,
    DealProof,
    DealRevealed,
    Event,
    GameEnded,
    PickConfirmed,
    SeatInfo,
    StemTaken,
)

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
COMMITMENT = "ab" * 32


def one_evolve_at_a_time(events: Iterable[Event], state: GameState) -> GameState:
    for event in events:
        state = evolve(state, event)
    return state


def seats_for(kinds: list[bool]) -> tuple[SeatInfo, ...]:
    return tuple(
        SeatInfo(seat=n, name=BEE_NAMES[(n - 1) % len(BEE_NAMES)], kind="bee")
        if is_bee
        else SeatInfo(seat=n, name=f"P{n}", kind="person", player_id=f"p{n}")
        for n, is_bee in enumerate(kinds, start=1)
    )


class Game:
    def __init__(self) -> None:
        self.state = initial_state
        self.log: list[Event] = []
        self.refused = 0
        self.calls = 0

    def record(self, event: Event) -> None:
        """An event the service folds itself (the deal's commitment and reveal)."""
        self.log.append(event)
        self.state = evolve(self.state, event)

    def run(self, command: Command) -> None:
        before = self.state
        try:
            after, events = decide_and_evolve(command, before)
        except RuleViolation:
            self.refused += 1
            return
        self.calls += 1
        assert after == one_evolve_at_a_time(events, before)
        assert fold(events, before) == after
        assert decide(command, before) == events
        assert after.version == before.version + len(events)
        self.log += events
        self.state = after


def play(
    players: int, kinds: list[bool], order: list[int], timed: bool, fair: bool, seed: int
) -> Game:
    rng = random.Random(seed)
    game = Game()
    now = AT
    proof = None
    if fair:
        game.record(DealCommitted(game_id="g", table_id="t", commitment=COMMITMENT))
        proof = DealProof(
            commitment=COMMITMENT,
            client_seeds=tuple(None for _ in range(players)),
            transcript="00",
            fingerprint="11",
        )
    clock = ClockSettings(turn_seconds=20, choice_seconds=10) if timed else None
    game.run(
        StartGame(
            game_id="g",
            table_id="t",
            seats=seats_for(kinds),
            deck_order=tuple(order),
            clock=clock,
            proof=proof,
            at=now,
        )
    )
    leave, tap, clock_runs = rng.random() * 0.08, rng.random(), rng.random() * 0.3
    for _ in range(3000):
        state = game.state
        if state.phase == "ended":
            break
        now += timedelta(seconds=rng.randint(0, 3))
        roll = rng.random()
        if timed and state.deadline is not None and roll < clock_runs:
            late = timedelta(seconds=rng.choice([-1, 0, 0, 2]))  # an early timer does nothing
            game.run(ExpireClock(deadline=state.deadline, at=state.deadline + late))
            now = max(now, state.deadline + late)
            continue
        if roll < 0.03:  # a stale timer, or a move that breaks a rule
            stale = state.deadline or now
            wrong: list[Command] = [
                ExpireClock(deadline=stale - timedelta(seconds=1), at=now),
                TakeStem(seat=1, stem=rng.randint(0, STEM_COUNT + 1), at=now),
                ConfirmPick(seat=rng.randint(0, players + 1), bee=0, at=now),
                ConfirmPick(seat=rng.randint(1, players), at=now),
                LeaveGame(seat=rng.randint(0, players + 1), at=now),
            ]
            game.run(rng.choice(wrong))
            continue
        if state.phase == "choosing":
            assert state.pending is not None
            if rng.random() < leave:
                game.run(LeaveGame(seat=state.pending.seat, at=now))
            else:
                game.run(TakeStem(seat=state.pending.seat, stem=rng.randint(1, 4), at=now))
            continue
        waiting = [s for s in state.seats if s.playing and s.confirmed is None]
        seat = rng.choice(waiting)
        if seat.is_bee:
            game.run(ConfirmPick(seat=seat.number, bee=choose_bee(view_for(state, seat.number))))
        elif rng.random() < leave:
            game.run(LeaveGame(seat=seat.number, at=now))
        elif rng.random() < tap:
            game.run(TapBee(seat=seat.number, bee=rng.choice(seat.hand), at=now))
        elif rng.random() < 0.3 and seat.tapped is not None:
            game.run(ConfirmPick(seat=seat.number, at=now))
        elif not timed or rng.random() < 0.7:  # on the clock, people sometimes just wait
            game.run(ConfirmPick(seat=seat.number, bee=rng.choice(seat.hand), at=now))
    assert game.state.phase == "ended"
    if fair:
        game.record(DealRevealed(server_seed="cd" * 32, deck_order=tuple(order)))
    return game


tables = st.integers(min_value=2, max_value=8).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.permutations(list(deck(n))),
    )
)


@pytest.mark.slow
@settings(deadline=None, max_examples=150)
@given(
    table=tables,
    timed=st.booleans(),
    fair=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    split=st.floats(min_value=0, max_value=1),
)
def test_property_a_decision_and_any_fold_give_exactly_the_states_of_evolve(
    table: tuple[int, list[bool], list[int]], timed: bool, fair: bool, seed: int, split: float
) -> None:
    players, kinds, order = table
    game = play(players, kinds, order, timed, fair, seed)
    reference = one_evolve_at_a_time(game.log, initial_state)
    assert game.state == reference
    assert fold(game.log) == reference
    at = round(split * len(game.log))
    assert fold(game.log[at:], fold(game.log[:at])) == reference
    assert fold([], reference) is reference


def test_the_random_games_reach_every_kind_of_event_and_refusal() -> None:
    """The generator is not vacuous: over a few games it makes every event and refuses moves."""
    kinds: set[str] = set()
    reasons: set[str] = set()
    choosers: set[str] = set()
    clock_plays: set[str] = set()
    refused = 0
    for seed in range(60):
        rng = random.Random(seed)
        players = rng.randint(2, 8)
        order = list(deck(players))
        rng.shuffle(order)
        people = [rng.random() < 0.5 for _ in range(players)]
        game = play(players, people, order, timed=seed % 2 == 0, fair=seed % 3 == 0, seed=seed)
        kinds |= {type(e).__name__ for e in game.log}
        reasons |= {e.reason for e in game.log if isinstance(e, GameEnded)}
        choosers |= {e.chosen_by for e in game.log if isinstance(e, StemTaken)}
        clock_plays |= {e.by_clock for e in game.log if isinstance(e, PickConfirmed)}
        refused += game.refused
        assert fold(game.log) == one_evolve_at_a_time(game.log, initial_state) == game.state
    assert kinds == {
        "DealCommitted",
        "GameStarted",
        "TurnStarted",
        "BeeTapped",
        "PickConfirmed",
        "PicksRevealed",
        "BeeLanded",
        "StemChoiceRequired",
        "StemTaken",
        "SeatLeft",
        "GameEnded",
        "DealRevealed",
    }
    assert reasons == {"finished", "abandoned", "last_person_standing"}
    assert choosers == {"player", "rule", "clock"}
    assert clock_plays == {"none", "tapped", "lowest"}
    assert refused > 0
