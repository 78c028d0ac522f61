"""docs/rules.md is true: its sting table and its worked examples are what the engine does."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from msgspec.structs import replace

from service.domain.rules.cards import deck, stings, total_stings
from service.domain.rules.commands import (
    Command,
    ConfirmPick,
    ExpireClock,
    StartGame,
    TakeStem,
    TapBee,
)
from service.domain.rules.engine import (
    GameState,
    cheapest_stem,
    decide,
    evolve,
    forecast,
    stem_costs,
)
from service.domain.rules.engine import initial_state as empty
from service.domain.rules.events import (
    BeeLanded,
    ClockSettings,
    Event,
    PicksRevealed,
    SeatInfo,
    SeatKind,
    StemChoiceRequired,
    StemTaken,
)

RULES = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_the_sting_table_is_the_decks() -> None:
    rows = re.findall(r"^\| (\d) \| 1–(\d+) \|(.*)\| (\d+) \|$", RULES, flags=re.M)
    assert [int(players) for players, *_ in rows] == list(range(2, 9))
    for players, last, counts, total in rows:
        n = int(players)
        assert int(last) == len(deck(n)) and int(total) == total_stings(n)
        by_stings = Counter(stings(bee) for bee in deck(n))
        shown = [c.strip() for c in counts.split("|")]
        assert shown == [str(by_stings[s]) if by_stings[s] else "–" for s in (1, 2, 3, 5, 7)]


def position(
    stems: list[tuple[int, ...]],
    hands: list[tuple[int, ...]],
    kinds: tuple[SeatKind, ...] = ("person",) * 4,
    clock: ClockSettings | None = None,
) -> GameState:
    """A 4-seat game at turn 1 with these stems and (partial) hands: the examples' positions."""
    seats = tuple(SeatInfo(seat=i + 1, name=f"seat {i + 1}", kind=k) for i, k in enumerate(kinds))
    start = StartGame(
        game_id="g", table_id="t", seats=seats, deck_order=tuple(deck(4)), clock=clock, at=AT
    )
    state = empty
    for event in decide(start, state):
        state = evolve(state, event)
    dealt = tuple(
        replace(s, hand=tuple(sorted(h))) for s, h in zip(state.seats, hands, strict=True)
    )
    return replace(state, seats=dealt, stems=tuple(stems))


def run(state: GameState, *commands: Command) -> tuple[GameState, list[Event]]:
    log: list[Event] = []
    for command in commands:
        events = decide(command, state)
        log += events
        for event in events:
            state = evolve(state, event)
    return state, log


def confirms(*picks: tuple[int, int]) -> list[ConfirmPick]:
    return [ConfirmPick(seat=seat, bee=bee, at=AT) for seat, bee in picks]


def landed(log: list[Event]) -> list[tuple[int, int, tuple[int, ...]]]:
    return [(e.bee, e.stem, e.taken) for e in log if isinstance(e, BeeLanded)]


def test_a_turn() -> None:
    state = position([(12,), (20,), (31,), (40,)], [(22, 1), (25, 2), (13, 3), (41, 4)])
    assert [forecast(state.stems, bee).stem for bee in (22, 25, 13, 41)] == [2, 2, 1, 4]
    state, log = run(state, *confirms((1, 22), (2, 25), (3, 13), (4, 41)))
    revealed = next(e for e in log if isinstance(e, PicksRevealed))
    assert [p.bee for p in revealed.picks] == [13, 22, 25, 41]
    assert landed(log) == [(13, 1, ()), (22, 2, ()), (25, 2, ()), (41, 4, ())]
    assert state.stems == ((12, 13), (20, 22, 25), (31,), (40, 41)) and state.turn == 2


def test_a_sixth_bee() -> None:
    state = position([(12,), (20,), (31, 33, 34, 36), (40,)], [(22,), (37,), (13,), (39,)])
    assert not forecast(state.stems, 39).sixth and forecast(state.stems, 39).stem == 3
    state, log = run(state, *confirms((1, 22), (2, 37), (3, 13), (4, 39)))
    assert (39, 3, (31, 33, 34, 36, 37)) in landed(log)
    assert state.seat(4).stings == 9 and state.stems[2] == (39,)


def test_a_too_low_choice() -> None:
    stems = [(12,), (15, 20), (31, 33), (40,)]
    state = position(stems, [(7, 1), (25, 2), (9, 3), (41, 4)])
    state, log = run(state, *confirms((1, 7), (3, 9), (2, 25), (4, 41)))
    assert state.phase == "choosing" and isinstance(log[-1], StemChoiceRequired)
    costs = [(c.bees, c.stings) for c in stem_costs(state.stems)]
    assert costs == [(1, 1), (2, 5), (2, 6), (1, 3)]
    assert cheapest_stem(state.stems) == 1
    state, log = run(state, TakeStem(seat=1, stem=1, at=AT))
    assert isinstance(log[0], StemTaken) and log[0].taken == (12,)
    assert landed(log) == [(9, 1, ()), (25, 2, ()), (41, 4, ())]
    assert state.seat(1).stings == 1 and state.stems[0] == (7, 9) and state.turn == 2


def test_the_clocks_exception() -> None:
    clock = ClockSettings(turn_seconds=20, choice_seconds=10)
    kinds: tuple[SeatKind, ...] = ("person", "person", "bee", "bee")
    hands: list[tuple[int, ...]] = [(25, 30), (3, 26), (9, 27), (41, 28)]
    start = position([(12,), (15, 20), (31, 33), (40,)], hands, kinds, clock)
    assert start.deadline is not None
    expire = ExpireClock(deadline=start.deadline, at=start.deadline)
    picked, _ = run(start, *confirms((1, 25), (3, 9), (4, 41)))

    # Seat 2 tapped nothing: the clock plays its lowest bee, 3, too low: no choice.
    state, log = run(picked, expire)
    taken = next(e for e in log if isinstance(e, StemTaken))
    assert (taken.seat, taken.bee, taken.stem, taken.chosen_by) == (2, 3, 1, "clock")
    assert landed(log) == [(9, 1, ()), (25, 2, ()), (41, 4, ())]
    assert state.turn == 2 and (state.deadline - start.deadline).total_seconds() == 20  # type: ignore[operator]

    # Seat 2 tapped 3 itself: the clock confirms it, and seat 2 gets its 10 s to choose.
    tapped, _ = run(picked, TapBee(seat=2, bee=3, at=AT))
    state, log = run(tapped, expire)
    assert state.phase == "choosing" and state.pending is not None and state.pending.seat == 2
    assert (state.deadline - start.deadline).total_seconds() == 10  # type: ignore[operator]
