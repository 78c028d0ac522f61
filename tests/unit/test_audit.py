"""The game audit (service/domain/audit.py) on exports built here, with no database.

`honest_export` deals a game by the fair scheme (service/domain/fairness.py), plays it through the
rules engine the way the service does (each HTTP move is one `decide`, then the bee players pick),
hashes the events into the stream's chain (service/domain/chain.py) and wraps them in
`swarm-game-export/1`.
Each tampering test then changes one thing and checks which step catches it, and where.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import random
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import msgspec
import pytest
from msgspec.structs import replace

from service.__main__ import main as service_main
from service.domain import fairness
from service.domain.audit import STEP_NAMES, AuditReport, audit, audit_document
from service.domain.chain import GENESIS, canonical_json, event_hash
from service.domain.rules.bees import bee_commands
from service.domain.rules.commands import (
    Command,
    ConfirmPick,
    ExpireClock,
    LeaveGame,
    StartGame,
    TakeStem,
    TapBee,
)
from service.domain.rules.engine import decide, evolve, initial_state
from service.domain.rules.events import (
    ClockSettings,
    DealCommitted,
    DealProof,
    DealRevealed,
    Event,
    SeatInfo,
    event_type,
)

GAME_ID = "3f6c2a1e-9b7d-4c8e-a5f0-1d2e3f4a5b6c"
OTHER_GAME_ID = "c0ffee00-1234-4abc-8def-0123456789ab"
TABLE_ID = "7a8b9c0d-1e2f-4a3b-8c5d-6e7f8a9b0c1d"
SERVER_SEED = hashlib.sha256(b"swarm audit test").digest()
START = datetime(2025, 6, 1, 18, 0, tzinfo=UTC)
CLOCK = ClockSettings(turn_seconds=20.0, choice_seconds=10.0)
REPO = Path(__file__).resolve().parents[2]

Style = Literal["mixed", "idle", "leave"]
Action = Literal["confirm", "tap_confirm", "tap", "idle", "leave"]


# --- an honest game, played as the service plays it ---------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """`kinds` is one letter a seat: p a person, b a bee player."""

    kinds: str
    clock: ClockSettings | None
    style: Style
    seed: int

    @property
    def id(self) -> str:
        timed = "timed" if self.clock else "untimed"
        return f"{self.kinds}-{timed}-{self.style}-{self.seed}"


SCENARIOS = (
    Scenario("ppbb", CLOCK, "mixed", 1),
    Scenario("pppb", CLOCK, "mixed", 7),
    Scenario("pbb", None, "mixed", 3),
    Scenario("ppb", CLOCK, "idle", 0),
    Scenario("pppb", CLOCK, "leave", 2),
    Scenario("pbbb", CLOCK, "leave", 5),
    Scenario("pp", CLOCK, "leave", 4),
)


def seats_of(kinds: str) -> tuple[SeatInfo, ...]:
    return tuple(
        SeatInfo(seat=n, name=f"Player {n}", kind="person", player_id=f"player-{n}")
        if kind == "p"
        else SeatInfo(seat=n, name=f"Bee {n}", kind="bee")
        for n, kind in enumerate(kinds, start=1)
    )


def client_seeds_of(kinds: str) -> tuple[bytes | None, ...]:
    """People contribute (seat 2 declines when there is one), bee players never do."""
    return tuple(
        None if kind == "b" or n == 2 else f"seed of seat {n}".encode()
        for n, kind in enumerate(kinds, start=1)
    )


def play(scenario: Scenario, published: fairness.Published) -> list[Event]:
    """The decide() outputs of a whole game, one per command, as the service would store them."""
    rng = random.Random(scenario.seed)
    clock = scenario.clock
    state = initial_state
    log: list[Event] = []
    now = START

    def run(command: Command) -> None:
        nonlocal state
        for event in decide(command, state):
            log.append(event)
            state = evolve(state, event)

    def bees_pick() -> None:
        while commands := bee_commands(state):
            for command in commands:
                run(replace(command, at=now))

    def pick(hand: tuple[int, ...]) -> int:
        return hand[0] if rng.random() < 0.5 else rng.choice(hand)

    def action_for(seat: int) -> Action:
        if scenario.style == "idle":
            return "idle"
        if scenario.style == "leave" and state.turn == 4 and seat == 1:
            return "leave"
        if clock is None:
            return rng.choice(["confirm", "tap_confirm"])
        return rng.choice(["confirm", "confirm", "tap_confirm", "tap", "idle"])

    run(
        StartGame(
            game_id=GAME_ID,
            table_id=TABLE_ID,
            seats=seats_of(scenario.kinds),
            deck_order=published.deck_order,
            clock=clock,
            proof=DealProof(
                scheme=fairness.SCHEME_VERSION,
                commitment=published.commitment.hex(),
                client_seeds=tuple(
                    None if seed is None else seed.hex() for seed in published.client_seeds
                ),
                transcript=published.transcript.hex(),
                fingerprint=published.fingerprint.hex(),
            ),
            at=now,
        )
    )
    bees_pick()
    acted: set[tuple[int, int]] = set()
    while state.phase != "ended":
        now += timedelta(seconds=rng.randint(1, 4), microseconds=rng.randint(0, 999_999))
        if state.phase == "choosing":
            assert state.pending is not None
            if clock is None or rng.random() < 0.5:
                run(TakeStem(seat=state.pending.seat, stem=rng.randint(1, 4), at=now))
            else:
                assert state.deadline is not None
                now = state.deadline + timedelta(milliseconds=250)
                run(ExpireClock(deadline=state.deadline, at=now))
            bees_pick()
            continue
        waiting = [
            s
            for s in state.seats
            if not s.is_bee
            and s.playing
            and s.confirmed is None
            and (state.turn, s.number) not in acted
        ]
        if not waiting:
            assert clock is not None and state.deadline is not None
            now = state.deadline + timedelta(milliseconds=500)
            run(ExpireClock(deadline=state.deadline, at=now))
            bees_pick()
            continue
        seat = waiting[0]
        acted.add((state.turn, seat.number))
        action = action_for(seat.number)
        bee = pick(seat.hand)
        if action == "confirm":
            run(ConfirmPick(seat=seat.number, bee=bee, at=now))
        elif action == "tap_confirm":
            run(TapBee(seat=seat.number, bee=rng.choice(seat.hand), at=now))
            run(TapBee(seat=seat.number, bee=bee, at=now))
            run(ConfirmPick(seat=seat.number, at=now))
        elif action == "tap":
            run(TapBee(seat=seat.number, bee=bee, at=now))
        elif action == "leave":
            run(LeaveGame(seat=seat.number, at=now))
        bees_pick()
    return log


def as_json(event: Event) -> dict[str, Any]:
    data = msgspec.json.decode(msgspec.json.encode(event))
    assert isinstance(data, dict)
    return data


def rehash(doc: dict[str, Any], *, renumber: bool = True) -> dict[str, Any]:
    """Recompute every hash (and, with `renumber`, the versions 1..n) as a forger would."""
    prev = GENESIS
    stream = f"game-{doc['game_id']}"
    for version, row in enumerate(doc["events"], start=1):
        if renumber:
            row["version"] = version
        digest = event_hash(prev, stream, row["version"], row["type"], canonical_json(row["data"]))
        row["hash"] = digest.hex()
        prev = digest
    return doc


def build_export(
    scenario: Scenario, client_seeds: tuple[bytes | None, ...] | None = None
) -> dict[str, Any]:
    """The scenario's export; `client_seeds` (default: `client_seeds_of`) as a forger picks them."""
    seeds = client_seeds_of(scenario.kinds) if client_seeds is None else client_seeds
    published = fairness.derive(GAME_ID, SERVER_SEED, seeds)
    events: list[Event] = [
        DealCommitted(game_id=GAME_ID, table_id=TABLE_ID, commitment=published.commitment.hex()),
        *play(scenario, published),
        DealRevealed(server_seed=published.server_seed.hex(), deck_order=published.deck_order),
    ]
    rows = []
    prev = GENESIS
    for version, event in enumerate(events, start=1):
        kind = event_type(event)
        data = msgspec.to_builtins(event)
        digest = event_hash(prev, f"game-{GAME_ID}", version, kind, canonical_json(data))
        rows.append(
            {
                "version": version,
                "type": kind,
                "recorded_at": (START + timedelta(seconds=version)).isoformat(),
                "hash": digest.hex(),
                "data": as_json(event),
            }
        )
        prev = digest
    doc = {
        "format": "swarm-game-export/1",
        "game_id": GAME_ID,
        "table_id": TABLE_ID,
        "events": rows,
        "fairness": {
            "scheme": fairness.SCHEME_VERSION,
            "commitment": published.commitment.hex(),
            "client_seeds": [
                None if seed is None else seed.hex() for seed in published.client_seeds
            ],
            "transcript": published.transcript.hex(),
            "fingerprint": published.fingerprint.hex(),
            "server_seed": published.server_seed.hex(),
            "deck_order": list(published.deck_order),
            "hands": [list(hand) for hand in published.hands],
            "stems": list(published.stems),
        },
    }
    # What the endpoint sends is JSON: make sure the document survives a round trip.
    parsed: dict[str, Any] = json.loads(json.dumps(doc))
    return parsed


_EXPORTS: dict[Scenario, dict[str, Any]] = {}


def honest(scenario: Scenario = SCENARIOS[0]) -> dict[str, Any]:
    """A fresh copy of the scenario's honest export (built once)."""
    if scenario not in _EXPORTS:
        _EXPORTS[scenario] = build_export(scenario)
    return copy.deepcopy(_EXPORTS[scenario])


def find(doc: dict[str, Any], kind: str, when: Callable[[dict[str, Any]], bool] = bool) -> int:
    """The index of the first event of type `kind` whose data satisfies `when`."""
    return next(
        i for i, row in enumerate(doc["events"]) if row["type"] == kind and when(row["data"])
    )


def assert_fails(
    report: AuditReport,
    step: str,
    *,
    version: int | None = None,
    detail: str | None = None,
    reason: str = "",
) -> None:
    statuses = {s.name: s.status for s in report.steps}
    failed_at = STEP_NAMES.index(step)
    assert not report.ok, report.render()
    assert [statuses[name] for name in STEP_NAMES[:failed_at]] == ["ok"] * failed_at, (
        report.render()
    )
    assert statuses[step] == "failed", report.render()
    assert all(statuses[name] == "skipped" for name in STEP_NAMES[failed_at + 1 :])
    failure = report.step(step)
    if version is not None:
        assert failure.version == version, report.render()
    if detail is not None:
        details = {d.name: d.status for d in failure.details}
        assert details[detail] == "failed", report.render()
    assert reason in failure.reason, report.render()
    assert f"✗ {step}" in report.render()


# --- the honest games ----------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_an_honest_export_passes_every_step(scenario: Scenario) -> None:
    report = audit(honest(scenario))
    assert report.ok, report.render()
    assert [s.name for s in report.steps] == list(STEP_NAMES)
    assert [s.status for s in report.steps] == ["ok"] * len(STEP_NAMES)
    assert [d.name for d in report.step("fairness").details] == list(fairness.STEP_NAMES)
    rendered = report.render()
    assert rendered.count("✓") == len(STEP_NAMES) + len(fairness.STEP_NAMES)
    assert "✗" not in rendered


def test_the_honest_games_cover_every_kind_of_move() -> None:
    """The scenarios exercise what replay must reconstruct: taps, confirms, clock plays, too-low
    choices by a person and by each clock, leaving, and every way a game ends."""
    seen: set[str] = set()
    for scenario in SCENARIOS:
        doc = honest(scenario)
        for row in doc["events"]:
            data = row["data"]
            kind = row["type"]
            seen.add(kind)
            if kind == "pick_confirmed":
                seen.add(f"pick by {data['by_clock']}")
            elif kind == "stem_taken":
                seen.add(f"stem by {data['chosen_by']}")
            elif kind == "game_ended":
                seen.add(f"ended {data['reason']}")
            elif kind == "stem_choice_required" and data["deadline"] is not None:
                seen.add("timed choice")
    assert {
        "bee_tapped",
        "seat_left",
        "stem_choice_required",
        "timed choice",
        "pick by none",
        "pick by tapped",
        "pick by lowest",
        "stem by player",
        "stem by rule",
        "stem by clock",
        "ended finished",
        "ended abandoned",
        "ended last_person_standing",
    } <= seen, sorted(seen)


def test_a_choice_clock_run_out_is_replayed() -> None:
    """A person's too-low bee whose choice clock ran out (stem_taken by the clock while choosing)
    starts a move of its own, and so does a person's own too-low choice."""
    found_clock = found_player = False
    for scenario in SCENARIOS:
        events = honest(scenario)["events"]
        for before, row in itertools.pairwise(events):
            if before["type"] == "stem_choice_required" and row["type"] == "stem_taken":
                found_clock |= row["data"]["chosen_by"] == "clock"
                found_player |= row["data"]["chosen_by"] == "player"
    assert found_clock and found_player


# --- the deal --------------------------------------------------------------------------------


def _game_started(doc: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = doc["events"][find(doc, "game_started")]["data"]
    return data


def _deal_revealed(doc: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = doc["events"][find(doc, "deal_revealed")]["data"]
    return data


def test_a_bee_swapped_between_hands_fails_the_deal_check() -> None:
    doc = honest()
    hands = doc["fairness"]["hands"]
    hands[0][3], hands[1][5] = hands[1][5], hands[0][3]
    _game_started(doc)["hands"] = copy.deepcopy(hands)
    assert_fails(audit(rehash(doc)), "fairness", detail="deal", reason="seat 1 was dealt")


def test_a_bee_swapped_in_the_game_only_fails_the_consistency_check() -> None:
    doc = honest()
    hands = _game_started(doc)["hands"]
    hands[0][3], hands[1][5] = hands[1][5], hands[0][3]
    version = doc["events"][find(doc, "game_started")]["version"]
    assert_fails(audit(rehash(doc)), "fairness", version=version, reason="seat 1's hand")


def test_a_changed_deck_order_fails_the_deck_check() -> None:
    doc = honest()
    deck = doc["fairness"]["deck_order"]
    deck[0], deck[-1] = deck[-1], deck[0]
    _deal_revealed(doc)["deck_order"] = list(deck)
    assert_fails(audit(rehash(doc)), "fairness", detail="deck", reason="the shuffle gives")


def test_one_flipped_bit_of_the_server_seed_fails_the_commitment_check() -> None:
    doc = honest()
    seed = bytearray(bytes.fromhex(doc["fairness"]["server_seed"]))
    seed[17] ^= 0x08
    doc["fairness"]["server_seed"] = seed.hex()
    _deal_revealed(doc)["server_seed"] = seed.hex()
    assert_fails(audit(rehash(doc)), "fairness", detail="commitment")


def test_hands_swapped_between_seats_fail_the_deal_check() -> None:
    doc = honest()
    hands = doc["fairness"]["hands"]
    hands[0], hands[1] = hands[1], hands[0]
    _game_started(doc)["hands"] = copy.deepcopy(hands)
    assert_fails(audit(rehash(doc)), "fairness", detail="deal")


def test_a_changed_client_seed_fails_the_transcript_check() -> None:
    doc = honest()
    changed = b"not what seat 1 gave".hex()
    doc["fairness"]["client_seeds"][0] = changed
    _game_started(doc)["proof"]["client_seeds"][0] = changed
    assert_fails(audit(rehash(doc)), "fairness", detail="transcript")


def test_a_client_seed_moved_to_another_seat_fails_the_transcript_check() -> None:
    doc = honest()
    seeds = doc["fairness"]["client_seeds"]
    assert seeds[0] is not None and seeds[1] is None
    seeds[0], seeds[1] = seeds[1], seeds[0]
    _game_started(doc)["proof"]["client_seeds"] = list(seeds)
    assert_fails(audit(rehash(doc)), "fairness", detail="transcript")


def test_a_proof_that_differs_from_the_record_fails() -> None:
    doc = honest()
    _game_started(doc)["proof"]["fingerprint"] = "00" * 32
    version = doc["events"][find(doc, "game_started")]["version"]
    assert_fails(audit(rehash(doc)), "fairness", version=version, reason="fingerprint")


def test_a_revealed_seed_that_differs_from_the_record_fails() -> None:
    doc = honest()
    _deal_revealed(doc)["server_seed"] = "11" * 32
    version = doc["events"][-1]["version"]
    assert_fails(audit(rehash(doc)), "fairness", version=version, reason="server seed")


# --- the commitment ----------------------------------------------------------------------------


def test_an_export_relabelled_with_another_game_id_fails_the_commitment_step() -> None:
    doc = honest()
    doc["game_id"] = OTHER_GAME_ID
    assert_fails(audit(doc), "commitment", version=1, reason=GAME_ID)


def test_a_game_replayed_under_another_game_id_fails_the_commitment_check() -> None:
    """Rewritten everywhere and re-chained: the commitment binds the game id, so the revealed
    seed no longer answers it."""
    doc = honest()
    doc["game_id"] = OTHER_GAME_ID
    doc["events"][0]["data"]["game_id"] = OTHER_GAME_ID
    _game_started(doc)["game_id"] = OTHER_GAME_ID
    assert_fails(audit(rehash(doc)), "fairness", detail="commitment")


def test_a_commitment_published_after_turn_1_fails() -> None:
    doc = honest()
    events = doc["events"]
    committed = events.pop(0)
    events.insert(find(doc, "turn_started") + 1, committed)
    report = audit(rehash(doc))
    assert_fails(report, "commitment", version=3, reason="after turn 1")


def test_a_stream_not_starting_with_the_commitment_fails() -> None:
    doc = honest()
    doc["events"].pop(0)
    assert_fails(audit(rehash(doc)), "commitment", reason="no deal_committed")


def test_a_commitment_for_another_seed_fails() -> None:
    doc = honest()
    doc["events"][0]["data"]["commitment"] = "ab" * 32
    assert_fails(audit(rehash(doc)), "commitment", version=1, reason="abab")


# --- the chain -------------------------------------------------------------------------------


def _a_landing(doc: dict[str, Any]) -> int:
    """A bee_landed that took nothing, well into the game."""
    return find(doc, "bee_landed", lambda d: not d["taken"] and d["stem"] != 4)


def test_an_edited_event_fails_the_chain() -> None:
    doc = honest()
    index = _a_landing(doc)
    doc["events"][index]["data"]["stem"] = 4
    assert_fails(
        audit(doc), "chain", version=doc["events"][index]["version"], reason="hash mismatch"
    )


def test_an_edited_event_re_chained_fails_the_replay() -> None:
    doc = honest()
    index = _a_landing(doc)
    doc["events"][index]["data"]["stem"] = 4
    assert_fails(
        audit(rehash(doc)), "replay", version=doc["events"][index]["version"], reason="stem"
    )


def test_edited_stings_re_chained_fail_the_replay() -> None:
    doc = honest()
    ended = doc["events"][find(doc, "game_ended")]
    ended["data"]["stings"][0] += 1
    assert_fails(audit(rehash(doc)), "replay", version=ended["version"], reason="stings")


def test_an_edited_deal_re_chained_fails_the_fairness_step() -> None:
    doc = honest()
    started = _game_started(doc)
    started["stems"] = list(reversed(started["stems"]))
    assert_fails(audit(rehash(doc)), "fairness", version=2, reason="stems")


def test_a_removed_event_fails_the_chain() -> None:
    doc = honest()
    index = _a_landing(doc)
    version = doc["events"][index]["version"]
    del doc["events"][index]
    assert_fails(audit(doc), "chain", version=version, reason="version gap")


def test_a_removed_event_renumbered_and_re_chained_fails_the_replay() -> None:
    doc = honest()
    index = _a_landing(doc)
    version = doc["events"][index]["version"]
    del doc["events"][index]
    assert_fails(audit(rehash(doc)), "replay", version=version)


def test_two_reordered_events_fail_the_chain() -> None:
    doc = honest()
    events = doc["events"]
    index = _a_landing(doc)
    events[index], events[index + 1] = events[index + 1], events[index]
    assert_fails(audit(doc), "chain", version=events[index + 1]["version"], reason="reordered")


def test_two_reordered_events_renumbered_and_re_chained_fail_the_replay() -> None:
    doc = honest()
    events = doc["events"]
    index = find(doc, "picks_revealed") + 1  # the landings fly lowest first
    events[index], events[index + 1] = events[index + 1], events[index]
    assert_fails(audit(rehash(doc)), "replay", version=index + 1)


def test_the_last_events_cut_off_fail() -> None:
    """A chain cannot notice its tail going; the audit notices the deal never being revealed."""
    doc = honest()
    del doc["events"][-2:]
    assert_fails(audit(doc), "fairness", reason="deal_revealed")


def test_a_game_that_never_ended_fails_the_result() -> None:
    """Cut after the move that started turn 10 (so every move left is whole), then revealed."""
    doc = honest()
    events = doc["events"]
    last_turn = find(doc, "turn_started", lambda d: d["turn"] == 10)
    doc["events"] = [*events[: last_turn + 1], events[-1]]
    assert_fails(audit(rehash(doc)), "result", reason="did not end")


# --- the replay ------------------------------------------------------------------------------


def test_a_move_of_a_bee_never_in_that_hand_fails_the_replay() -> None:
    doc = honest()
    held = set(doc["fairness"]["hands"][1])  # seat 2's
    index = find(doc, "pick_confirmed", lambda d: d["seat"] == 2 and d["by_clock"] == "none")
    row = doc["events"][index]
    stranger = doc["fairness"]["hands"][0][0]
    assert stranger not in held
    row["data"]["bee"] = stranger
    assert_fails(
        audit(rehash(doc)),
        "replay",
        version=row["version"],
        reason=f"Bee {stranger} is not in your hand",
    )
    assert "bee-not-in-hand" in audit(rehash(doc)).step("replay").reason


def test_a_clock_that_ran_out_before_its_deadline_fails_the_replay() -> None:
    """Turn 2's deadline moved 15 s back (re-chained): the `at` of turn 1's clock, read off it,
    is now before turn 1's deadline, so the rules say that clock had not run out yet."""
    doc = honest(SCENARIOS[3])  # idle: every turn ends by the clock
    index = find(doc, "turn_started", lambda d: d["turn"] == 2)
    data = doc["events"][index]["data"]
    deadline = datetime.fromisoformat(data["deadline"])
    data["deadline"] = (deadline - timedelta(seconds=15)).isoformat()
    report = audit(rehash(doc))
    assert_fails(report, "replay", reason="changes nothing")
    assert report.step("replay").reason.startswith("the clock running out at")


def test_a_move_of_a_seat_that_does_not_exist_fails_the_replay() -> None:
    doc = honest()
    row = {"version": 0, "type": "seat_left", "recorded_at": START.isoformat(), "hash": ""}
    row["data"] = {"type": "seat_left", "seat": 9}
    doc["events"].insert(find(doc, "turn_started") + 1, row)
    assert_fails(audit(rehash(doc)), "replay", version=4, reason="no seat 9")


def test_an_event_that_starts_no_move_fails_the_replay() -> None:
    doc = honest()
    events = doc["events"]
    events.insert(3, copy.deepcopy(events[find(doc, "bee_landed")]))
    assert_fails(audit(rehash(doc)), "replay", version=4, reason="does not start any move")


def test_moves_after_the_deal_was_revealed_fail_the_replay() -> None:
    doc = honest()
    events = doc["events"]
    revealed = events.pop()
    events.insert(find(doc, "turn_started", lambda d: d["turn"] == 10) + 1, revealed)
    assert_fails(audit(rehash(doc)), "replay", reason="after the deal was revealed")


# --- the format ------------------------------------------------------------------------------


def test_an_unknown_format_fails_the_format_step() -> None:
    doc = honest()
    doc["format"] = "swarm-game-export/2"
    assert_fails(audit(doc), "format", reason="unknown format")


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda d: d.pop("fairness"), "fairness"),
        (lambda d: d["events"][0].pop("hash"), "hash"),
        (lambda d: d["fairness"].update(server_seed="not hex"), "server_seed"),
        (lambda d: d["events"][1]["data"].update(type="turn_started"), "data of type"),
        (lambda d: d["events"][2]["data"].update(turn="one"), "turn"),
        (lambda d: d.update(events=[]), "no events"),
    ],
)
def test_a_malformed_document_fails_the_format_step(
    mutate: Callable[[dict[str, Any]], object], reason: str
) -> None:
    doc = honest()
    mutate(doc)
    assert_fails(audit(doc), "format", reason=reason)


def test_a_document_that_is_not_an_object_fails_the_format_step() -> None:
    assert_fails(audit_document([1, 2]), "format", reason="list")


# --- the command line ------------------------------------------------------------------------


def _write(path: Path, doc: object) -> str:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_the_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path / "good.json", honest())
    assert service_main(["audit", good]) == 0
    out = capsys.readouterr().out
    assert "every check passed" in out and "✓ replay" in out

    doc = honest()
    doc["events"][_a_landing(doc)]["data"]["stem"] = 4
    bad = _write(tmp_path / "bad.json", doc)
    assert service_main(["audit", bad]) == 1
    out = capsys.readouterr().out
    assert "FAILED the chain step" in out and "✗ chain" in out and "- replay" in out

    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    assert service_main(["audit", str(tmp_path / "broken.json")]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert service_main(["audit", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_python_dash_m_service_audit(tmp_path: Path) -> None:
    doc = honest()
    doc["fairness"]["client_seeds"][0] = "00"
    path = _write(tmp_path / "export.json", doc)
    result = subprocess.run(
        [sys.executable, "-m", "service", "audit", path],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "✗ fairness" in result.stdout and "✗ transcript" in result.stdout


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, list[str | None]]]:
    """An HTTP server answering /export with the honest export, 401 without the token."""
    body = json.dumps(honest()).encode()
    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            auth = self.headers.get("Authorization")
            seen.append(auth)
            if auth != "Bearer s3cret":
                self.send_response(401)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/export", seen
    finally:
        server.shutdown()
        server.server_close()


def test_the_cli_fetches_a_url_with_a_bearer_token(
    served: tuple[str, list[str | None]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, seen = served
    assert service_main(["audit", url, "--token", "s3cret"]) == 0
    assert "every check passed" in capsys.readouterr().out
    assert service_main(["audit", url]) == 2
    assert "HTTP 401" in capsys.readouterr().err
    assert seen == ["Bearer s3cret", None]
