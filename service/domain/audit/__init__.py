"""Audit one exported game: is the deal fair, is the log intact, was every move legal?

Pure (no database, no clock, no file or network: the command line that reads an export is
`service/cli_audit.py`). The input is the `swarm-game-export/1` document of `exportGame`
(`export.py`); `audit_document(document, expect)` runs these steps in order and stops at the
first failure (the rest "skipped"), each in its own module:

1. ``format`` (export.py): the document decodes and every event's data is an event of its type.
2. ``commitment`` (commitment.py): the game stream starts with ``deal_committed`` for this game,
   before any turn; the table's events (if exported) prove the commitment came before every
   seed and the deal after them.
3. ``fairness`` (deal.py): ``fairness.verify`` of the published values (its five steps are the
   details), and the game's proof, deal and revealed seed/deck agree with them.
4. ``chain`` (steps.py): ``chain.verify_chain`` over stream ``game-<game_id>``.
5. ``replay`` (replay.py): every move re-decided by the rules gives exactly the recorded events.
6. ``result`` (steps.py): the replayed game ended with the stings and winners recorded.

`expect` (expect.py) holds what a player recorded during play; each value is checked by the
step that owns it, so a rewritten export that agrees with itself still fails there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from service.domain.audit.commitment import check_commitment
from service.domain.audit.deal import check_fairness
from service.domain.audit.expect import NOTHING, Expectations, parse_hash, parse_head
from service.domain.audit.export import (
    FORMAT,
    Decoded,
    ExportedEvent,
    FairnessRecord,
    GameExport,
    TableRecord,
    check_format,
)
from service.domain.audit.replay import check_replay
from service.domain.audit.report import (
    STEP_NAMES,
    Anchors,
    AuditReport,
    AuditStep,
    Failed,
    StepName,
)
from service.domain.audit.steps import check_chain, check_result
from service.domain.chain import ChainVerdict

__all__ = [
    "FORMAT",
    "STEP_NAMES",
    "Anchors",
    "AuditReport",
    "AuditStep",
    "Expectations",
    "ExportedEvent",
    "FairnessRecord",
    "GameExport",
    "TableRecord",
    "audit",
    "audit_document",
    "parse_hash",
    "parse_head",
]

Outcome = str | tuple[str, tuple[AuditStep, ...]]


def audit(export: Mapping[str, Any], expect: Expectations = NOTHING) -> AuditReport:
    """Audit one `swarm-game-export/1` document (already parsed from JSON)."""
    return audit_document(export, expect)


def audit_document(document: object, expect: Expectations = NOTHING) -> AuditReport:
    """`audit` for any parsed JSON value (a non-object fails the format step)."""
    found: dict[str, Any] = {}  # what one step hands the next: the decoded export, chain, state

    def format_() -> Outcome:
        reason, found["decoded"] = check_format(document)
        return reason

    def chain() -> Outcome:
        reason, found["chain"] = check_chain(found["decoded"], expect)
        return reason

    def replay() -> Outcome:
        reason, found["final"] = check_replay(found["decoded"])
        return reason

    checks: list[tuple[StepName, Callable[[], Outcome]]] = [
        ("format", format_),
        ("commitment", lambda: check_commitment(found["decoded"], expect)),
        ("fairness", lambda: check_fairness(found["decoded"], expect)),
        ("chain", chain),
        ("replay", replay),
        ("result", lambda: check_result(found["decoded"], found["final"])),
    ]
    steps = _run(checks)
    decoded: Decoded | None = found.get("decoded")
    game_id = decoded.export.game_id if decoded is not None else None
    if game_id is None and isinstance(document, Mapping):
        candidate = document.get("game_id")
        game_id = candidate if isinstance(candidate, str) else None
    anchors = None
    if decoded is not None and all(step.ok for step in steps):
        anchors = _anchors(decoded, found["chain"])
    return AuditReport(game_id, tuple(steps), anchors)


def _run(checks: list[tuple[StepName, Callable[[], Outcome]]]) -> list[AuditStep]:
    steps: list[AuditStep] = []
    failed = False
    for name, check in checks:
        if failed:
            steps.append(AuditStep(name, "skipped", "not checked: an earlier step failed"))
            continue
        try:
            outcome = check()
        except Failed as failure:
            steps.append(
                AuditStep(name, "failed", failure.reason, failure.version, failure.details)
            )
            failed = True
            continue
        reason, details = outcome if isinstance(outcome, tuple) else (outcome, ())
        steps.append(AuditStep(name, "ok", reason, None, details))
    return steps


def _anchors(decoded: Decoded, verdict: ChainVerdict) -> Anchors:
    record = decoded.export.fairness
    return Anchors(record.commitment, record.fingerprint, verdict.verified, verdict.head.hex())
