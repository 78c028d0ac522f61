"""An attacker's review of what the rules hide, on the pure parts (docs/fairness.md, "Hidden
values"): each test is one channel, and fails if it opens. The e2e half is
tests/e2e/test_hidden_channels.py."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from service.api.envelopes import entries
from service.domain import chain
from service.domain.rules import batch, rollout, strong
from service.domain.rules.bee_view import BeeView, view_for
from service.domain.rules.cards import deck
from service.domain.rules.commands import ConfirmPick, ExpireClock, StartGame, TapBee
from service.domain.rules.engine import decide_and_evolve, initial_state
from service.domain.rules.events import (
    ClockSettings,
    PickConfirmed,
    PicksRevealed,
    SeatInfo,
    encode_event,
    event_type,
)
from service.domain.rules.levels import LEVELS
from service.domain.views import game_view
from service.store.log import RecordedEvent
from service.usecases.streams import head_shown, visible_events
from tests.e2e.test_hash_attacker import attack

SEATS = tuple(SeatInfo(seat=i, name=f"P{i}", kind="person", player_id=f"p{i}") for i in range(1, 4))


def v1_log(game_id: str) -> list[RecordedEvent]:
    """A game begun before chain v2 (migration 0015) and still running after it: its stream
    stays under v1, whose hashes cover the hidden values open. Turn 1: seat 2 taps, seats 1
    and 2 confirm; seat 3 has still to pick."""
    order = list(deck(3))
    random.Random(3).shuffle(order)
    state, events = decide_and_evolve(
        StartGame(game_id=game_id, table_id="t", seats=SEATS, deck_order=tuple(order)),
        initial_state,
    )
    for command in (
        TapBee(seat=2, bee=state.seat(2).hand[3]),
        ConfirmPick(seat=1, bee=state.seat(1).hand[0]),
        ConfirmPick(seat=2, bee=None),
    ):
        state, more = decide_and_evolve(command, state)
        events += more
    stream, prev, log = f"game-{game_id}", chain.GENESIS, []
    at = datetime(2026, 11, 30, tzinfo=UTC)
    for version, event in enumerate(events, start=1):
        data = encode_event(event)
        kind = event_type(event)
        prev = chain.event_hash(prev, stream, version, kind, chain.canonical_json(data))
        at += timedelta(seconds=1)
        log.append(RecordedEvent(version, stream, version, kind, data, {}, at, prev, chain=1))
    return log


def test_a_v1_game_still_running_shows_no_hash_to_attack() -> None:
    """Hashes of a stream under chain v1, shown before the end, give its hidden picks away (the
    control in tests/e2e/test_hash_attacker.py); a game that was running when the service was
    upgraded stays v1 to its end. So while it runs, no v1 hash is shown: not beside an event
    (listGameEvents, the SSE stream) nor as getGame's head_hash."""
    log = v1_log("v1-game")
    for viewer in (1, 3, None):
        shown = msgspec.to_builtins(entries(visible_events(log, viewer, game_over=False)))
        heads = [head_shown(log[-1], over=False)]
        recovered = attack("game-v1-game", shown, [h for h in heads if h], deck(3)[-1])
        assert recovered == [], (viewer, recovered)
        assert {e["hash"] for e in shown} == {""}
        assert heads == [None]
    # Once it has ended everything is public: the hashes show, and check.
    over = msgspec.to_builtins(entries(visible_events(log, 3, game_over=True)))
    assert [e["hash"] for e in over] == [r.hash.hex() for r in log]
    assert head_shown(log[-1], over=True) == log[-1].hash.hex()
    # The control: what a v1 log shows open gives seat 2's tap and confirm away.
    open_log = [
        {**e, "hash": r.hash.hex()}
        for e, r in zip(
            msgspec.to_builtins(entries(visible_events(log, 3, game_over=False))), log, strict=True
        )
    ]
    assert attack("game-v1-game", open_log, [], deck(3)[-1])


def _mid_game_views(players: int, turns: int, count: int) -> list[BeeView]:
    """`count` views of seat 2 after `turns` random turns that differ only in its hand: the
    public part (stems, piles, bees seen, stings, who left) is one and the same, and each hand
    is one the public part allows (drawn from the bees nobody has seen)."""
    rng = random.Random(players * 100 + turns)
    seats = tuple(SeatInfo(seat=i, name=f"B{i}", kind="bee") for i in range(1, players + 1))
    order = list(deck(players))
    rng.shuffle(order)
    state, _ = decide_and_evolve(
        StartGame(game_id="g", table_id="t", seats=seats, deck_order=tuple(order)), initial_state
    )
    while state.turn <= turns and state.phase == "picking":
        for seat in state.seats:
            if state.phase == "picking" and seat.confirmed is None:
                bee = rng.choice(state.seat(seat.number).hand)
                state, _ = decide_and_evolve(ConfirmPick(seat=seat.number, bee=bee), state)
    view = view_for(state, 2)
    hidden = [b for b in deck(players) if b not in view.seen]
    return [
        msgspec.structs.replace(view, hand=tuple(sorted(rng.sample(hidden, len(view.hand)))))
        for _ in range(count)
    ]


def _work(level: str, view: BeeView, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """What one decision of `level` spends, as the counts and shapes of its imagined games:
    every `batch.playouts` call (candidates, deals), every rollout turn flown, every rollout
    pick (`strong.quick_pick`)."""
    spent: list[object] = []
    playouts, fly, quick = batch.playouts, rollout.fly, strong.quick_pick

    def counted_playouts(v: BeeView, candidates: list[int], deals: int, *a: Any) -> Any:
        spent.append(("playouts", len(candidates), deals))
        return playouts(v, candidates, deals, *a)

    def counted_fly(*a: Any) -> None:
        spent.append("fly")
        fly(*a)

    def counted_quick(*a: Any) -> int:
        spent.append("pick")
        return quick(*a)

    monkeypatch.setattr(batch, "playouts", counted_playouts)
    monkeypatch.setattr(strong, "fly", counted_fly)
    monkeypatch.setattr(strong, "quick_pick", counted_quick)
    LEVELS[level].policy(view, bytes(32))  # type: ignore[index]
    monkeypatch.undo()
    return spent


@pytest.mark.parametrize(
    "level",
    [
        pytest.param(name, marks=pytest.mark.slow) if name == "expert" else name
        for name, lv in LEVELS.items()
        if lv.seeded
    ],
)
@pytest.mark.parametrize(("players", "turns"), [(3, 1), (5, 4)])
def test_a_thinking_bee_spends_the_same_work_whatever_its_hand(
    level: str, players: int, turns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Timing: a bee that thinks for long (tens of milliseconds) does it inside the append that
    starts a turn, so how long it thought is in the answer's time and in `recorded_at` (for a
    turn the clock ended, `recorded_at` minus the public deadline). Its work must not depend on
    its hand beyond what is public: the same count of imagined games, of the same sizes, for
    every hand the public state allows (what is left is the cost of each card look, a few per
    cent of the CPU: docs/fairness.md)."""
    views = _mid_game_views(players, turns, 6)
    assert len({v.hand for v in views}) > 1
    spent = [_work(level, view, monkeypatch) for view in views]
    assert spent[0], "the probe counted nothing: the level spends its work elsewhere"
    assert all(s == spent[0] for s in spent), [len(s) for s in spent]


def test_how_the_clock_played_is_first_seen_with_the_reveal_and_is_public_then() -> None:
    """`by_clock` (whether the clock flew a pick, its tapped bee or the seat's lowest) is hidden
    until the reveal. The clock's picks are decided in the same step as the reveal, so nobody
    sees one before it. From the reveal on it is no secret: a spectator predicts it from what
    every view shows before the deadline (a seat still `tapped` or `picking` is flown by the
    clock, its tapped bee or its lowest), and `lowest` tells that the seat holds no lower bee;
    the rules (seed §7) make that public, the API shows `by_clock` null until the end anyway."""
    rng = random.Random(11)
    at = datetime(2026, 12, 1, tzinfo=UTC)
    clock = ClockSettings()
    clocked = 0
    for _ in range(30):
        players = rng.randint(2, 6)
        seats = tuple(
            SeatInfo(seat=i, name=f"P{i}", kind="person", player_id=f"p{i}")
            for i in range(1, players + 1)
        )
        order = list(deck(players))
        rng.shuffle(order)
        state, _ = decide_and_evolve(
            StartGame(
                game_id="g", table_id="t", seats=seats, deck_order=tuple(order), clock=clock, at=at
            ),
            initial_state,
        )
        while state.phase != "ended":
            assert state.deadline is not None
            if state.phase == "picking":
                for seat in state.seats:
                    hand, roll = state.seat(seat.number).hand, rng.random()
                    if state.phase == "picking" and roll < 0.3:
                        tap = TapBee(seat=seat.number, bee=rng.choice(hand), at=at)
                        state, _ = decide_and_evolve(tap, state)
                    elif state.phase == "picking" and roll < 0.5:
                        confirm = ConfirmPick(seat=seat.number, bee=rng.choice(hand), at=at)
                        state, _ = decide_and_evolve(confirm, state)
            deadline = state.deadline
            if state.phase == "picking":
                assert deadline is not None
                public = {s.seat: s.status for s in game_view(state, None).seats}
                expire = ExpireClock(deadline=deadline, at=deadline)
                state, events = decide_and_evolve(expire, state)
                played = [e for e in events if isinstance(e, PickConfirmed)]
                if played:
                    reveal = next(i for i, e in enumerate(events) if isinstance(e, PicksRevealed))
                    assert all(events.index(p) < reveal for p in played)
                for pick in played:
                    expected = {"tapped": "tapped", "picking": "lowest"}[public[pick.seat]]
                    assert pick.by_clock == expected, (public, pick)
                    clocked += 1
            elif state.phase == "choosing":
                assert deadline is not None
                expire = ExpireClock(deadline=deadline, at=deadline)
                state, _ = decide_and_evolve(expire, state)
            at = state.deadline or at
    assert clocked > 100
