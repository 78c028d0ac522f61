"""Audit one exported game: is the deal fair, is the log intact, was every move legal?

Pure (no database, no clock); only the command line (`main`) reads a file or fetches a URL.
The input is the `swarm-game-export/1` document of the `exportGame` endpoint::

    {"format": "swarm-game-export/1", "game_id": …, "table_id": …,
     "events": [{"version", "type", "recorded_at", "hash", "data"}, …],
     "fairness": {"scheme", "commitment", "client_seeds", "transcript", "fingerprint",
                  "server_seed", "deck_order", "hands", "stems"}}

`audit(export)` runs these steps in order and stops at the first failure (the rest "skipped"):

1. ``format``: the document decodes (msgspec) and every event's data is an event of its type.
2. ``commitment``: the stream starts with ``deal_committed`` for this game id, before any turn
   started, and it commits to the published commitment.
3. ``fairness``: ``service.domain.fairness.verify`` of the published values (its five steps are the
   details), and the game's proof, deal and revealed seed/deck agree with them.
4. ``chain``: ``service.domain.chain.verify_chain`` over stream ``game-<game_id>``.
5. ``replay``: every move is re-decided by the rules engine (``decide``) from the state before it,
   and must give exactly the recorded events. The command of each move is read off its first
   event; its ``at`` off the first deadline its events carry.
6. ``result``: the replayed game ended, with the stings and winners that ``game_ended`` records.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import msgspec

from service.domain import fairness
from service.domain.chain import ChainLink, verify_chain
from service.domain.rules.commands import (
    Command,
    ConfirmPick,
    ExpireClock,
    LeaveGame,
    StartGame,
    TakeStem,
    TapBee,
)
from service.domain.rules.engine import GameState, decide, evolve, initial_state, winners_of
from service.domain.rules.errors import RuleViolation
from service.domain.rules.events import (
    BeeTapped,
    ClockSettings,
    DealCommitted,
    DealProof,
    DealRevealed,
    Event,
    GameEnded,
    GameEvent,
    GameStarted,
    PickConfirmed,
    SeatLeft,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
    event_type,
)

FORMAT = "swarm-game-export/1"

StepName = Literal["format", "commitment", "fairness", "chain", "replay", "result"]
StepStatus = Literal["ok", "failed", "skipped"]
STEP_NAMES: tuple[StepName, ...] = ("format", "commitment", "fairness", "chain", "replay", "result")

_HEX = re.compile(r"(?:[0-9a-f]{2})*")
_HASH_HEX = re.compile(r"[0-9a-f]{64}")
# Before the real `at` of a timed move is known, decide it at some moment to see its deadlines.
_PROBE_AT = datetime(2000, 1, 1, tzinfo=UTC)


# --- the document ------------------------------------------------------------------------------


class ExportedEvent(msgspec.Struct, frozen=True):
    """One stored event as exported: `data` is the event exactly as stored (with its type tag)."""

    version: int
    type: str
    recorded_at: datetime
    hash: str
    data: dict[str, Any]


class FairnessRecord(msgspec.Struct, frozen=True):
    """The published deal (docs/fairness.md); byte strings in lowercase hex, None = no seed."""

    scheme: int
    commitment: str
    client_seeds: tuple[str | None, ...]
    transcript: str
    fingerprint: str
    server_seed: str
    deck_order: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...]
    stems: tuple[int, ...]


class GameExport(msgspec.Struct, frozen=True):
    format: str
    game_id: str
    table_id: str
    events: tuple[ExportedEvent, ...]
    fairness: FairnessRecord


# --- the report --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuditStep:
    """One step: ok (reason says what was checked), failed (why, and at which event version when
    one event is to blame) or skipped (an earlier step failed). `details` are sub-checks (the five
    steps of `fairness.verify` in the fairness step)."""

    name: str
    status: StepStatus
    reason: str = ""
    version: int | None = None
    details: tuple[AuditStep, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"


_MARK = {"ok": "✓", "failed": "✗", "skipped": "-"}


@dataclass(frozen=True, slots=True)
class AuditReport:
    game_id: str | None
    steps: tuple[AuditStep, ...]

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(step.ok for step in self.steps)

    @property
    def failure(self) -> AuditStep | None:
        """The failed step, if any (there is at most one)."""
        return next((step for step in self.steps if step.status == "failed"), None)

    def step(self, name: str) -> AuditStep:
        return next(step for step in self.steps if step.name == name)

    def render(self) -> str:
        """One line per step (and per fairness check), ✓ ok / ✗ failed / - skipped."""
        game = self.game_id or "?"
        failure = self.failure
        if failure is None:
            head = f"Game {game}: every check passed."
        else:
            where = f" at event v{failure.version}" if failure.version is not None else ""
            head = f"Game {game}: FAILED the {failure.name} step{where}."
        lines = [head]
        width = max(len(name) for name in STEP_NAMES)
        for step in self.steps:
            lines.append(_line(step, width, indent=""))
            inner = max((len(detail.name) for detail in step.details), default=0)
            for detail in step.details:
                lines.append(_line(detail, inner, indent="    "))
        return "\n".join(lines)


def _line(step: AuditStep, width: int, indent: str) -> str:
    where = f"v{step.version}: " if step.version is not None else ""
    text = f"{where}{step.reason}".strip()
    return f"{indent}{_MARK[step.status]} {step.name:<{width}}  {text}".rstrip()


class _Failed(Exception):
    """A step found a problem: its reason, the event version to blame, and any sub-checks."""

    def __init__(
        self, reason: str, version: int | None = None, details: tuple[AuditStep, ...] = ()
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.version = version
        self.details = details


# --- the steps ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Row:
    record: ExportedEvent
    event: Event

    @property
    def version(self) -> int:
        return self.record.version


@dataclass(slots=True)
class _Audit:
    export: GameExport | None = None
    rows: tuple[_Row, ...] = ()
    final: GameState | None = None

    # 1 ---------------------------------------------------------------------------------------
    def check_format(self, document: object) -> str:
        if not isinstance(document, Mapping):
            raise _Failed(f"the export is a JSON {type(document).__name__}, not an object")
        declared = document.get("format")
        if declared != FORMAT:
            raise _Failed(f"unknown format {declared!r}: this auditor reads {FORMAT!r}")
        try:
            export = msgspec.convert(document, GameExport)
        except msgspec.ValidationError as error:
            raise _Failed(f"not a {FORMAT} document: {error}") from None
        record = export.fairness
        for name in ("commitment", "transcript", "fingerprint", "server_seed"):
            if not _HEX.fullmatch(getattr(record, name)):
                raise _Failed(f"fairness.{name} is not lowercase hex")
        for seat, seed in enumerate(record.client_seeds, start=1):
            if seed is not None and not _HEX.fullmatch(seed):
                raise _Failed(f"fairness.client_seeds: seat {seat}'s seed is not lowercase hex")
        if not export.events:
            raise _Failed("the export has no events")
        rows = []
        for record_ in export.events:
            where = record_.version
            if not _HASH_HEX.fullmatch(record_.hash):
                raise _Failed("the event's hash is not 64 lowercase hex digits", where)
            tag = record_.data.get("type")
            if tag != record_.type:
                raise _Failed(
                    f"an event of type {record_.type!r} holds data of type {tag!r}", where
                )
            try:
                event: Event = msgspec.convert(record_.data, Event)
            except msgspec.ValidationError as error:
                raise _Failed(
                    f"the {record_.type} data is not a valid event: {error}", where
                ) from None
            rows.append(_Row(record_, event))
        self.export = export
        self.rows = tuple(rows)
        return f"{FORMAT}, {len(rows)} events"

    # 2 ---------------------------------------------------------------------------------------
    def check_commitment(self) -> str:
        export = self._export()
        committed = [(i, row) for i, row in enumerate(self.rows) if _is(row, DealCommitted)]
        if not committed:
            raise _Failed("no deal_committed event: the server never committed to a seed")
        position, row = committed[0]
        event = row.event
        assert isinstance(event, DealCommitted)
        turn = next((r for r in self.rows[:position] if _is(r, TurnStarted)), None)
        if turn is not None:
            raise _Failed(
                f"the commitment was published at v{row.version}, after turn 1 started "
                f"(v{turn.version}): it must come before anyone contributes or plays",
                row.version,
            )
        if position != 0 or row.version != 1:
            first = self.rows[0]
            raise _Failed(
                f"the stream starts with {first.record.type} (v{first.version}); a fairly "
                f"dealt game starts with deal_committed (found at v{row.version})",
                row.version,
            )
        if len(committed) > 1:
            again = committed[1][1]
            raise _Failed("a second deal_committed: the commitment changed", again.version)
        if event.game_id != export.game_id:
            raise _Failed(
                f"the commitment is for game {event.game_id}, not for the exported game "
                f"{export.game_id}",
                row.version,
            )
        if event.table_id != export.table_id:
            raise _Failed(
                f"the commitment is for table {event.table_id}, not {export.table_id}",
                row.version,
            )
        if event.scheme != export.fairness.scheme:
            raise _Failed(
                f"committed under scheme {event.scheme}, published under {export.fairness.scheme}",
                row.version,
            )
        if event.commitment != export.fairness.commitment:
            raise _Failed(
                f"the commitment recorded is {event.commitment}, the fairness record "
                f"publishes {export.fairness.commitment}",
                row.version,
            )
        return f"deal_committed is v1, for this game, committing to {event.commitment[:16]}…"

    # 3 ---------------------------------------------------------------------------------------
    def check_fairness(self) -> tuple[str, tuple[AuditStep, ...]]:
        export = self._export()
        record = export.fairness
        started = self._only(GameStarted, "the deal (game_started)")
        revealed = self._only(DealRevealed, "the revealed seed (deal_revealed)")
        if record.scheme != fairness.SCHEME_VERSION:
            raise _Failed(
                f"unknown fairness scheme {record.scheme}: this auditor checks scheme "
                f"{fairness.SCHEME_VERSION}"
            )
        game = started.event
        assert isinstance(game, GameStarted)
        published = fairness.Published(
            game_id=export.game_id,
            players=len(game.seats),
            commitment=bytes.fromhex(record.commitment),
            client_seeds=tuple(
                None if seed is None else bytes.fromhex(seed) for seed in record.client_seeds
            ),
            transcript=bytes.fromhex(record.transcript),
            fingerprint=bytes.fromhex(record.fingerprint),
            server_seed=bytes.fromhex(record.server_seed),
            deck_order=record.deck_order,
            hands=record.hands,
            stems=record.stems,
        )
        details = tuple(
            AuditStep(step.name, step.status, step.reason) for step in fairness.verify(published)
        )
        failed = next((step for step in details if step.status == "failed"), None)
        if failed is not None:
            raise _Failed(f"{failed.name}: {failed.reason}", details=details)

        proof = DealProof(
            scheme=record.scheme,
            commitment=record.commitment,
            client_seeds=record.client_seeds,
            transcript=record.transcript,
            fingerprint=record.fingerprint,
        )
        if game.proof is None:
            raise _Failed("the game was dealt without a proof", started.version, details)
        if game.proof != proof:
            raise _Failed(
                "the proof published before turn 1 differs from the fairness record in "
                + _differences(game.proof, proof),
                started.version,
                details,
            )
        if tuple(game.hands) != record.hands:
            seat = next(
                (
                    n
                    for n, (a, b) in enumerate(zip(game.hands, record.hands, strict=False), 1)
                    if a != b
                ),
                min(len(game.hands), len(record.hands)) + 1,
            )
            raise _Failed(
                f"seat {seat}'s hand in the game is not the one the fair deal gives it",
                started.version,
                details,
            )
        if tuple(game.stems) != record.stems:
            raise _Failed(
                f"the game's stems {_bees(game.stems)} are not the fair deal's "
                f"{_bees(record.stems)}",
                started.version,
                details,
            )
        reveal = revealed.event
        assert isinstance(reveal, DealRevealed)
        if reveal.server_seed != record.server_seed:
            raise _Failed(
                "the server seed revealed in the game is not the published one",
                revealed.version,
                details,
            )
        if tuple(reveal.deck_order) != record.deck_order:
            raise _Failed(
                "the deck order revealed in the game is not the published one",
                revealed.version,
                details,
            )
        contributed = sum(seed is not None for seed in record.client_seeds)
        caveat = (
            ""
            if contributed
            else "; with no seed contributed, the server could have chosen this deal"
        )
        return (
            f"the deal is the scheme's, locked in before turn 1 ({contributed} of "
            f"{len(record.client_seeds)} seats contributed a seed{caveat})",
            details,
        )

    # 4 ---------------------------------------------------------------------------------------
    def check_chain(self) -> str:
        export = self._export()
        stream = f"game-{export.game_id}"
        links = [
            ChainLink(
                stream=stream,
                version=row.version,
                type=row.record.type,
                data=row.record.data,
                hash=bytes.fromhex(row.record.hash),
            )
            for row in self.rows
        ]
        verdict = verify_chain(links, stream=stream)
        if not verdict.ok:
            raise _Failed(f"{verdict.reason}: {verdict.detail}", verdict.failed_version)
        return f"{verdict.verified} events chained, head {verdict.head.hex()[:16]}…"

    # 5 ---------------------------------------------------------------------------------------
    def check_replay(self) -> str:
        export = self._export()
        rows = self.rows
        revealed = next((r.event for r in rows if isinstance(r.event, DealRevealed)), None)
        deck = revealed.deck_order if revealed is not None else export.fairness.deck_order
        state = initial_state
        revealed_at: int | None = None
        moves = 0
        index = 0
        while index < len(rows):
            row = rows[index]
            event = row.event
            if revealed_at is not None and not isinstance(event, DealRevealed):
                raise _Failed(
                    f"{row.record.type} after the deal was revealed at v{revealed_at}: the "
                    "server seed (and so every hand) was public while the game went on",
                    row.version,
                )
            if isinstance(event, DealCommitted | DealRevealed):
                if isinstance(event, DealRevealed):
                    revealed_at = row.version
                state = evolve(state, event)
                index += 1
                continue
            move = _move_for(event, state, export, deck)
            if isinstance(move, str):
                raise _Failed(move, row.version)
            expected = _decide(move, state, rows[index:], row.version)
            recorded = [r.event for r in rows[index : index + len(expected)]]
            for offset, want in enumerate(expected):
                if offset >= len(recorded):
                    raise _Failed(
                        f"{move.describe}: the log ends before its {event_type(want)} "
                        f"(event {offset + 1} of {len(expected)})",
                        rows[-1].version,
                    )
                got = recorded[offset]
                if got != want:
                    raise _Failed(
                        f"{move.describe} gives {_differences(got, want, want_first=True)}",
                        rows[index + offset].version,
                    )
            for got in recorded:
                state = evolve(state, got)
            index += len(expected)
            moves += 1
        self.final = state
        return f"{moves} moves re-decided by the rules give exactly the recorded events"

    # 6 ---------------------------------------------------------------------------------------
    def check_result(self) -> str:
        state = self.final
        assert state is not None
        ended = [row for row in self.rows if isinstance(row.event, GameEnded)]
        if state.phase != "ended" or not ended:
            raise _Failed(f"the game did not end: the log stops in turn {state.turn}")
        row = ended[-1]
        event = row.event
        assert isinstance(event, GameEnded)
        stings = tuple(seat.stings for seat in state.seats)
        if event.stings != stings:
            raise _Failed(
                f"game_ended records stings {list(event.stings)}, the bees taken add up to "
                f"{list(stings)}",
                row.version,
            )
        if event.reason == "finished":
            winners = winners_of(state.seats)
        elif event.reason == "last_person_standing":
            winners = tuple(s.number for s in state.seats if not s.is_bee and s.playing)
        else:
            winners = ()
        if event.winners != winners or state.winners != winners:
            raise _Failed(
                f"game_ended names winners {list(event.winners)}, the stings make {list(winners)}",
                row.version,
            )
        who = ", ".join(f"seat {n}" for n in winners) or "nobody"
        return f"{event.reason}: stings {list(stings)}, won by {who}"

    # ------------------------------------------------------------------------------------------
    def _export(self) -> GameExport:
        assert self.export is not None
        return self.export

    def _only(self, kind: type[Any], what: str) -> _Row:
        found = [row for row in self.rows if isinstance(row.event, kind)]
        if not found:
            raise _Failed(f"the export has no {what}")
        if len(found) > 1:
            raise _Failed(f"the export has more than one {what}", found[1].version)
        return found[0]


def _is(row: _Row, kind: type[Any]) -> bool:
    return isinstance(row.event, kind)


def _bees(bees: Sequence[int]) -> str:
    return " ".join(str(bee) for bee in bees)


def _show(value: object) -> str:
    return msgspec.json.encode(value).decode()


def _tag(value: msgspec.Struct) -> str:
    return event_type(value) if isinstance(value, GameEvent) else type(value).__name__


def _differences(got: msgspec.Struct, want: msgspec.Struct, *, want_first: bool = False) -> str:
    """How two structs differ, field by field ("expected" is `want`)."""
    if type(got) is not type(want):
        return f"{_tag(want)}, but {_tag(got)} was recorded"
    parts = []
    for field in want.__struct_fields__:
        a, b = getattr(got, field), getattr(want, field)
        if a != b:
            parts.append(f"{field} {_show(b)} (recorded {_show(a)})")
    label = f"{_tag(want)} with " if want_first else ""
    return label + "; ".join(parts)


# --- reading a move off the log ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Move:
    """A command to re-decide, given the `at` it was handled at (None for an untimed game)."""

    describe: str
    make: Callable[[datetime | None], Command]
    clock: ClockSettings | None
    probe_at: datetime | None  # `at` for the first decision, before the real one is known


def _move_for(
    event: Event, state: GameState, export: GameExport, deck: tuple[int, ...]
) -> _Move | str:
    """The command whose decision starts with `event`, or why no command can."""
    clock = state.clock
    probe = _PROBE_AT if clock is not None else None
    match event:
        case GameStarted():
            started = event
            return _Move(
                "starting the game",
                lambda at: StartGame(
                    game_id=export.game_id,
                    table_id=export.table_id,
                    seats=started.seats,
                    deck_order=deck,
                    clock=started.clock,
                    proof=started.proof,
                    at=at,
                ),
                started.clock,
                _PROBE_AT if started.clock is not None else None,
            )
        case BeeTapped(seat=seat, bee=bee):
            return _Move(
                f"seat {seat} tapping bee {bee}",
                lambda at: TapBee(seat=seat, bee=bee, at=at),
                clock,
                probe,
            )
        case PickConfirmed(seat=seat, bee=bee, by_clock="none"):
            return _Move(
                f"seat {seat} confirming bee {bee}",
                lambda at: ConfirmPick(seat=seat, bee=bee, at=at),
                clock,
                probe,
            )
        case StemTaken(seat=seat, stem=stem, chosen_by="player"):
            return _Move(
                f"seat {seat} taking stem {stem}",
                lambda at: TakeStem(seat=seat, stem=stem, at=at),
                clock,
                probe,
            )
        case SeatLeft(seat=seat):
            return _Move(
                f"seat {seat} leaving", lambda at: LeaveGame(seat=seat, at=at), clock, probe
            )
        case PickConfirmed() | GameEnded() | StemTaken(chosen_by="clock"):
            deadline = state.deadline
            if deadline is None:
                return (
                    f"{event_type(event)} by the clock, but no clock was running "
                    f"(phase {state.phase})"
                )
            if isinstance(event, StemTaken) and state.phase != "choosing":
                return "stem_taken by the clock, but nobody was choosing a stem"
            return _Move(
                f"the clock running out at {deadline.isoformat()}",
                lambda at: ExpireClock(deadline=deadline, at=at or deadline),
                clock,
                deadline,
            )
    return (
        f"{event_type(event)} does not start any move here (phase {state.phase}): "
        "no command's decision begins with it"
    )


def _decide(move: _Move, state: GameState, rows: Sequence[_Row], version: int) -> list[Event]:
    """Decide `move` at the moment its recorded deadlines say it was handled."""
    at = move.probe_at
    try:
        events = decide(move.make(at), state)
        recorded_at = _at_from(events, rows, move.clock)
        if recorded_at is not None and recorded_at != at:
            at = recorded_at
            events = decide(move.make(at), state)
    except RuleViolation as error:
        raise _Failed(
            f"{move.describe} is against the rules ({error.code}): {error.detail}", version
        ) from None
    except Exception as error:  # a malformed log can drive the engine off its assumptions
        raise _Failed(
            f"{move.describe}: the rules engine could not apply it: {error}", version
        ) from None
    if not events:
        when = f" at {at.isoformat()}" if at is not None else ""
        raise _Failed(f"{move.describe}{when} changes nothing, yet events were recorded", version)
    return events


def _at_from(
    events: Sequence[Event], rows: Sequence[_Row], clock: ClockSettings | None
) -> datetime | None:
    """The move's `at`: its first deadline as recorded, less that clock's duration."""
    if clock is None:
        return None
    for offset, event in enumerate(events):
        if isinstance(event, TurnStarted | StemChoiceRequired) and event.deadline is not None:
            if offset >= len(rows):
                return None
            recorded = rows[offset].event
            if type(recorded) is not type(event):
                return None
            assert isinstance(recorded, TurnStarted | StemChoiceRequired)
            if recorded.deadline is None:
                return None
            seconds = clock.turn_seconds if isinstance(event, TurnStarted) else clock.choice_seconds
            return recorded.deadline - timedelta(seconds=seconds)
    return None


# --- entry points ------------------------------------------------------------------------------


def audit(export: Mapping[str, Any]) -> AuditReport:
    """Audit one `swarm-game-export/1` document (already parsed from JSON)."""
    return audit_document(export)


def audit_document(document: object) -> AuditReport:
    """`audit` for any parsed JSON value (a non-object fails the format step)."""
    state = _Audit()
    checks: list[tuple[StepName, Callable[[], str | tuple[str, tuple[AuditStep, ...]]]]] = [
        ("format", lambda: state.check_format(document)),
        ("commitment", state.check_commitment),
        ("fairness", state.check_fairness),
        ("chain", state.check_chain),
        ("replay", state.check_replay),
        ("result", state.check_result),
    ]
    steps: list[AuditStep] = []
    failed = False
    for name, check in checks:
        if failed:
            steps.append(AuditStep(name, "skipped", "not checked: an earlier step failed"))
            continue
        try:
            outcome = check()
        except _Failed as failure:
            steps.append(
                AuditStep(name, "failed", failure.reason, failure.version, failure.details)
            )
            failed = True
            continue
        reason, details = outcome if isinstance(outcome, tuple) else (outcome, ())
        steps.append(AuditStep(name, "ok", reason, None, details))
    game_id = state.export.game_id if state.export is not None else None
    if game_id is None and isinstance(document, Mapping):
        candidate = document.get("game_id")
        game_id = candidate if isinstance(candidate, str) else None
    return AuditReport(game_id, tuple(steps))


class UnreadableExport(Exception):
    """The export could not be read or parsed as JSON."""


def load(source: str, token: str | None = None, *, timeout: float = 30.0) -> object:
    """The parsed JSON of a file path or an http(s) URL (Bearer `token` if given)."""
    if source.startswith(("http://", "https://")):
        import httpx

        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            response = httpx.get(source, headers=headers, timeout=timeout, follow_redirects=True)
        except httpx.HTTPError as error:
            raise UnreadableExport(f"cannot fetch {source}: {error}") from None
        if response.status_code != 200:
            raise UnreadableExport(f"cannot fetch {source}: HTTP {response.status_code}")
        text: bytes = response.content
    else:
        try:
            text = Path(source).read_bytes()
        except OSError as error:
            raise UnreadableExport(f"cannot read {source}: {error.strerror or error}") from None
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise UnreadableExport(f"{source} is not JSON: {error}") from None


def main(source: str, token: str | None = None) -> int:
    """`python -m service audit FILE|URL [--token T]`: 0 if every step passed, 1 if one failed,
    2 if the input could not be read."""
    try:
        document = load(source, token)
    except UnreadableExport as error:
        print(f"audit: {error}", file=sys.stderr)
        return 2
    report = audit_document(document)
    print(report.render())
    return 0 if report.ok else 1
