"""Examples for the OpenAPI document: every request body, and the main responses.

The game views and events are made by the code itself from a game played by the pure rules
(seeded, so the document does not drift), so they are true by construction; the rest are
written out and kept valid by the contract tests (schemathesis sends the request examples).
"""

from __future__ import annotations

import functools
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from service.api.envelopes import entries
from service.api.history_routes import GameSteps, game_state_at
from service.api.problems import doc_url, retryable, title_of
from service.domain.analysis import BeeEstimate, TurnAnalysis, game_analysis
from service.domain.history import moment, states, steps_of, turns_of
from service.domain.rules.engine import cheapest_stem, evolve, initial_state
from service.domain.rules.events import SeatInfo
from service.domain.rules.simulate import play_game, random_policy
from service.domain.views import game_view
from service.store.log import RecordedEvent
from service.usecases.history import StateAt
from service.usecases.streams import visible_events

GAME_ID = "0b7d6c3e-5f1a-4c2b-9e8d-7a6b5c4d3e2f"
TABLE_ID = "5e4d3c2b-1a09-4f8e-8d7c-6b5a49382716"
PLAYER_ID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
AT = datetime(2026, 1, 2, 15, 4, 5, tzinfo=UTC)


def _example(summary: str, value: Any) -> dict[str, Any]:
    return {"summary": summary, "value": value}


def requests() -> dict[str, dict[str, Any]]:
    seed = _example("A seed (lowercase hex)", {"client_seed": "5eed00c0ffee"})
    no_seed = _example("No seed", {})
    return {
        "createGuest": {"guest": _example("A guest named Ada", {"name": "Ada"})},
        "register": {
            "account": _example("An account", {"name": "Ada", "password": "correct horse"})
        },
        "login": {"login": _example("Log in", {"name": "Ada", "password": "correct horse"})},
        "createSoloTable": {"four": _example("Four players (you and 3 bees)", {"players": 4})},
        "createTable": {
            "free": _example("A free table of 4, default clock", {"seats": 4}),
            "buy_in": _example(
                "A buy-in table of 2 with a faster clock",
                {"seats": 2, "stake": 100, "turn_seconds": 15, "choice_seconds": 8},
            ),
            "rated": _example("A rated table of 6", {"seats": 6, "rated": True}),
        },
        "playNow": {
            "any": _example("A casual table of 4", {}),
            "rated": _example("A rated table of 3", {"seats": 3, "rated": True}),
        },
        "joinTable": {"no_seed": no_seed, "seed": seed},
        "startGame": {"no_seed": no_seed, "seed": seed},
        "fillWithBees": {"no_seed": no_seed, "seed": seed},
        "playAgain": {"no_seed": no_seed, "seed": seed},
        "contributeSeed": {"seed": seed},
        "commitSeed": {
            "commitment": _example(
                "Commit to a seed by its hash",
                {"seed_hash": "3f" * 32},
            )
        },
        "revealSeed": {"seed": seed},
        "submitMove": {
            "tap": _example(
                "Tap a bee (saved, changeable)", {"type": "tap", "bee": 17, "move_id": "t-1"}
            ),
            "confirm": _example(
                "Confirm a bee (final)", {"type": "confirm", "bee": 17, "move_id": "c-1"}
            ),
            "confirm_tapped": _example(
                "Confirm the bee you tapped", {"type": "confirm", "move_id": "c-2"}
            ),
            "take_stem": _example(
                "Your bee is too low: take stem 3",
                {"type": "take_stem", "stem": 3, "move_id": "s-1"},
            ),
        },
    }


def problem(status: int, code: str) -> dict[str, Any]:
    return {
        "type": f"urn:swarm:problem:{code}",
        "title": title_of(code),
        "status": status,
        "detail": "What went wrong, for a person to read.",
        "code": code,
        "retryable": retryable(code),
        "doc_url": doc_url(code),
    }


def _json(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


@functools.cache
def _game() -> tuple[Any, Any, list[Any]]:
    """A 4-player game, you in seat 1, played by the rules: (a mid-game view, the final view,
    the log as seat 1 saw it after a few turns)."""
    rng = random.Random(11)
    seats = [SeatInfo(seat=1, name="Ada", kind="person", player_id=PLAYER_ID)] + [
        SeatInfo(seat=n, name=name, kind="bee")
        for n, name in zip(range(2, 5), ("Buzz", "Bumble", "Honey"), strict=True)
    ]
    _, log = play_game(
        seats, [random_policy(rng)] * 4, rng, lambda state, seat: cheapest_stem(state.stems)
    )
    states = []
    state = initial_state
    for event in log:
        state = evolve(state, event)
        states.append(state)
    middle = next(s for s in states if s.turn == 4 and s.phase == "picking")
    ids = {"game_id": GAME_ID, "table_id": TABLE_ID}
    mid_view = msgspec.structs.replace(game_view(middle, 1, AT), **ids)
    final_view = msgspec.structs.replace(game_view(states[-1], 1, AT), **ids)
    recorded = [
        RecordedEvent(
            position=n,
            stream=f"game-{GAME_ID}",
            version=n,
            type=msgspec.inspect.type_info(type(event)).tag,  # type: ignore[attr-defined]
            data=msgspec.json.encode(_with_ids(event)),
            metadata={},
            recorded_at=AT + timedelta(seconds=n),
            hash=bytes([n]) * 32,
        )
        for n, event in enumerate(log[:8], start=1)
    ]
    return mid_view, final_view, entries(visible_events(recorded, 1, game_over=False))


@functools.cache
def _history() -> tuple[Any, Any]:
    """The same game, finished, replayed: (getGameState at its first sixth bee, seen by
    seat 1; listGameSteps of it)."""
    rng = random.Random(11)
    seats = [SeatInfo(seat=1, name="Ada", kind="person", player_id=PLAYER_ID)] + [
        SeatInfo(seat=n, name=name, kind="bee")
        for n, name in zip(range(2, 5), ("Buzz", "Bumble", "Honey"), strict=True)
    ]
    _, log = play_game(
        seats, [random_policy(rng)] * 4, rng, lambda state, seat: cheapest_stem(state.stems)
    )
    log = [_with_ids(event) for event in log]
    after = states(log)
    recorded = [
        RecordedEvent(
            position=n,
            stream=f"game-{GAME_ID}",
            version=n,
            type=msgspec.inspect.type_info(type(event)).tag,  # type: ignore[attr-defined]
            data=msgspec.json.encode(event),
            metadata={},
            recorded_at=AT + timedelta(seconds=n),
            hash=bytes([n % 256]) * 32,
        )
        for n, event in enumerate(log, start=1)
    ]
    listed = steps_of(log, after, 1, True)
    v = next(s.version for s in listed if s.kind == "sixth_bee")
    shown = moment(after[v - 2], after[v - 1], log[v - 1], 1, True)
    item = visible_events([recorded[v - 1]], 1, game_over=True)[0]
    state = game_state_at(StateAt(GAME_ID, v, len(log), True, item, shown))
    turn = next(
        t for t in turns_of(listed) if any(listed[f - 1].kind == "sixth_bee" for f in t.flights)
    )
    window = [s for s in listed if turn.start <= s.version <= turn.last]
    steps = GameSteps(
        game_id=GAME_ID, latest=len(log), over=True, steps=tuple(window), turns=(turn,)
    )
    return _json(state), _json(steps)


def _with_ids(event: Any) -> Any:
    fields = {f: v for f, v in (("game_id", GAME_ID), ("table_id", TABLE_ID)) if hasattr(event, f)}
    return msgspec.structs.replace(event, **fields) if fields else event


def responses() -> dict[str, Any]:
    mid, final, log = _game()
    seat = {"seat": 1, "name": "Ada", "kind": "person", "player_id": PLAYER_ID}
    table = {
        "table_id": TABLE_ID,
        "mode": "online",
        "status": "playing",
        "host": PLAYER_ID,
        "capacity": 4,
        "stake": 0,
        "clock": {"turn_seconds": 20.0, "choice_seconds": 10.0},
        "seats": [seat],
        "you": 1,
        "games": [GAME_ID],
        "game": _json(mid),
        "next_game": None,
        "your_seed": None,
        "rated": False,
    }
    session = {
        "player_id": PLAYER_ID,
        "name": "Ada",
        "registered": True,
        "token": "q7Yx…the token…",
        "expires_at": "2026-02-01T15:04:05Z",
    }
    return {
        "createGuest": {
            "player_id": PLAYER_ID,
            "name": "Ada",
            "token": "q7Yx…the token…",
            "expires_at": "2026-02-01T15:04:05Z",
        },
        "register": session,
        "login": session,
        "createTable": table,
        "getTable": table,
        "getGame": _json(mid),
        "getGameState": _history()[0],
        "listGameSteps": _history()[1],
        "submitMove": _json(final),
        "listGameEvents": {"events": _json(log), "game_version": len(log)},
        "createGameStreamTicket": {
            "ticket": "Zk3…",
            "expires_at": "2026-01-02T15:09:05Z",
            "stream_url": f"/games/{GAME_ID}/stream?ticket=Zk3…",
        },
        "listMyGames": {
            "tables": [
                {
                    "table_id": TABLE_ID,
                    "mode": "online",
                    "status": "playing",
                    "seat": 1,
                    "stake": 0,
                    "game_id": GAME_ID,
                    "game_phase": "picking",
                    "turn": 4,
                    "turns": 10,
                    "your_move": True,
                }
            ]
        },
        "health": {"status": "ok", "database": "ok"},
        "analyseGame": _game_analysis(),
    }


def _game_analysis() -> Any:
    """A seat's whole game against the expert, made by the code from ten turns' answers (the
    played bee, the expert's pick, and their estimates), so its sums and order are true."""
    rows = (  # turn's (played, its stings, pick, its stings)
        (88, 9.1, 88, 9.1),
        (41, 8.75, 23, 7.2),
        (65, 7.4, 65, 7.4),
        (12, 6.9, 70, 4.05),
        (99, 4.3, 99, 4.3),
        (34, 4.6, 30, 4.1),
        (57, 2.2, 57, 2.2),
        (75, 1.6, 75, 1.6),
        (3, 0.9, 80, 0.85),
        (101, 0.0, 101, 0.0),
    )
    turns = [
        TurnAnalysis(
            game_id=GAME_ID,
            seat=2,
            turn=turn,
            level="expert",
            hand=sorted({played, pick}),
            stems=[[5], [27], [60], [93]],
            pick=pick,
            played=played,
            estimates=[
                BeeEstimate(bee=bee, stings=stings, win=0.25, samples=480)
                for bee, stings in sorted({(played, played_stings), (pick, pick_stings)})
            ],
        )
        for turn, (played, played_stings, pick, pick_stings) in enumerate(rows, 1)
    ]
    return _json(game_analysis(GAME_ID, 2, turns))
