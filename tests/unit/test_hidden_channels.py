"""An attacker's review of what the rules hide, on the pure parts (docs/fairness.md, "Hidden
values"): each test is one channel, and fails if it opens. The e2e half is
tests/e2e/test_hidden_channels.py."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import msgspec

from service.api.envelopes import entries
from service.domain import chain
from service.domain.rules.cards import deck
from service.domain.rules.commands import ConfirmPick, StartGame, TapBee
from service.domain.rules.engine import decide_and_evolve, initial_state
from service.domain.rules.events import SeatInfo, encode_event, event_type
from service.store.events import RecordedEvent
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
