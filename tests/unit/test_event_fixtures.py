"""Old events must always decode: one stored line per event type, as `encode_event` writes them,
plus lines written before the optional fields existed (they decode to the defaults).

Never edit a line of `fixtures/events_v1.jsonl`: it stands for events already in the store.
Append a line for every new event shape (a new type, a new field, a new value of a literal).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from service.domain.rules.events import (
    EVENT_TYPES,
    BeeLanded,
    BeeTapped,
    ClockSettings,
    DealCommitted,
    DealRevealed,
    GameEnded,
    GameStarted,
    Pick,
    PickConfirmed,
    PicksRevealed,
    SeatInfo,
    SeatLeft,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
    decode_event,
    encode_event,
    event_type,
)

FIXTURE = Path(__file__).parent / "fixtures" / "events_v1.jsonl"
LINES = FIXTURE.read_text(encoding="utf-8").splitlines()

# (line number from 1, type, fields to check, written with every field as encode_event does)
EXPECTED: list[tuple[int, type, dict[str, Any], bool]] = [
    (
        1,
        GameStarted,
        {
            "game_id": "g1",
            "seats": (
                SeatInfo(seat=1, name="Ann", kind="person", player_id="p1"),
                SeatInfo(seat=2, name="Buzz", kind="bee"),
            ),
            "stems": (5, 10, 15, 20),
            "clock": ClockSettings(turn_seconds=20.0, choice_seconds=10.0),
        },
        True,
    ),
    (2, TurnStarted, {"turn": 1, "deadline": datetime(2025, 3, 1, 12, 0, 20, tzinfo=UTC)}, True),
    (3, BeeTapped, {"seat": 1, "bee": 3}, True),
    (4, PickConfirmed, {"seat": 1, "bee": 3}, True),
    (
        5,
        PicksRevealed,
        {"turn": 1, "picks": (Pick(seat=1, bee=3), Pick(seat=2, bee=13))},
        True,
    ),
    (
        6,
        StemChoiceRequired,
        {"seat": 1, "bee": 3, "deadline": datetime(2025, 3, 1, 12, 0, 30, tzinfo=UTC)},
        True,
    ),
    (
        7,
        StemTaken,
        {"seat": 1, "bee": 3, "stem": 4, "taken": (20,), "chosen_by": "player"},
        True,
    ),
    (8, BeeLanded, {"seat": 2, "bee": 13, "stem": 2, "taken": ()}, True),
    (9, BeeLanded, {"bee": 6, "stem": 1, "taken": (1, 2, 3, 4, 5)}, True),
    (10, SeatLeft, {"seat": 2}, True),
    (
        11,
        GameEnded,
        {"stings": (3, 0), "winners": (1,), "reason": "last_person_standing"},
        True,
    ),
    # Without the optional fields: the defaults fill them in.
    (
        12,
        GameStarted,
        {
            "clock": None,
            "seats": (
                SeatInfo(seat=1, name="Ann", kind="person", player_id=None),
                SeatInfo(seat=2, name="Buzz", kind="bee", player_id=None),
            ),
        },
        False,
    ),
    (13, GameStarted, {"clock": ClockSettings(turn_seconds=20.0, choice_seconds=10.0)}, False),
    (14, TurnStarted, {"turn": 2, "deadline": None}, False),
    (15, StemChoiceRequired, {"seat": 2, "bee": 1, "deadline": None}, False),
    (16, BeeLanded, {"bee": 14, "taken": ()}, False),
    (17, StemTaken, {"taken": (15, 16), "chosen_by": "player"}, False),
    (18, GameEnded, {"winners": (1, 2), "reason": "finished"}, False),
    # The clock (seed §7): picks the turn clock played, and a stem the clock took.
    (19, PickConfirmed, {"seat": 1, "bee": 7, "by_clock": "tapped"}, True),
    (20, PickConfirmed, {"seat": 2, "bee": 2, "by_clock": "lowest"}, True),
    (
        21,
        StemTaken,
        {"seat": 2, "bee": 2, "stem": 1, "taken": (5, 6), "chosen_by": "clock"},
        True,
    ),
    (22, DealCommitted, {"game_id": "g2", "scheme": 1}, True),
    (23, GameStarted, {"game_id": "g2", "clock": None}, True),
    (
        24,
        DealRevealed,
        {"server_seed": "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"},
        True,
    ),
    # Bee levels (issue 16): each bee seat records how it chooses; a person's level is null.
    (
        25,
        GameStarted,
        {
            "game_id": "g3",
            "seats": (
                SeatInfo(seat=1, name="Ann", kind="person", player_id="p1", level=None),
                SeatInfo(seat=2, name="Buzz", kind="bee", level="strong"),
                SeatInfo(seat=3, name="Bumble", kind="bee", level="heuristic"),
            ),
        },
        True,
    ),
]

# Fields added after lines were stored, with the default an older line decodes to.
ADDED_FIELDS: dict[str, dict[str, Any]] = {
    "pick_confirmed": {"by_clock": "none"},
    "game_started": {"proof": None},
}
# The same for the seats inside `game_started`.
ADDED_SEAT_FIELDS: dict[str, Any] = {"level": None}


def test_a_seat_stored_before_levels_decodes_as_no_level() -> None:
    event = decode_event(LINES[0])
    assert isinstance(event, GameStarted)
    assert [seat.level for seat in event.seats] == [None, None]


def test_an_old_pick_confirmed_decodes_as_confirmed_by_its_seat_not_the_clock() -> None:
    event = decode_event(LINES[3])
    assert isinstance(event, PickConfirmed)
    assert event.by_clock == "none"
    assert json.loads(encode_event(event)) == {**json.loads(LINES[3]), "by_clock": "none"}


def test_the_fixture_lines_and_the_expectations_match() -> None:
    assert [number for number, *_ in EXPECTED] == list(range(1, len(LINES) + 1))


def test_every_event_type_has_a_stored_line() -> None:
    stored = {json.loads(line)["type"] for line in LINES}
    assert stored == {type_.__struct_config__.tag for type_ in EVENT_TYPES}


@pytest.mark.parametrize(
    ("number", "expected_type", "fields", "full"),
    EXPECTED,
    ids=[f"line{number}-{type_.__name__}" for number, type_, _, _ in EXPECTED],
)
def test_old_events_always_decode(
    number: int, expected_type: type, fields: dict[str, Any], full: bool
) -> None:
    line = LINES[number - 1]
    event = decode_event(line)
    assert type(event) is expected_type
    assert event_type(event) == json.loads(line)["type"]
    for name, value in fields.items():
        assert getattr(event, name) == value, name
    # decoding from bytes works the same
    assert decode_event(line.encode()) == event
    if full:
        # today's encoder still writes exactly what was stored, plus any field added since,
        # at its default
        stored = json.loads(line)
        encoded = json.loads(encode_event(event))
        for old, new in zip(stored.get("seats", []), encoded.get("seats", []), strict=True):
            for name, default in ADDED_SEAT_FIELDS.items():
                if name not in old:
                    assert new.pop(name) == default
        assert {name: encoded[name] for name in stored} == stored
        added = {name: value for name, value in encoded.items() if name not in stored}
        assert added == {
            name: value
            for name, value in ADDED_FIELDS.get(stored["type"], {}).items()
            if name in added
        }
    else:
        assert decode_event(encode_event(event)) == event
