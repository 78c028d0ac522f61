"""The audit's report: one step per check, ok / failed / skipped, and how it reads as text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StepName = Literal["format", "commitment", "fairness", "chain", "replay", "result"]
StepStatus = Literal["ok", "failed", "skipped"]
STEP_NAMES: tuple[StepName, ...] = ("format", "commitment", "fairness", "chain", "replay", "result")


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


@dataclass(frozen=True, slots=True)
class Anchors:
    """What a verified game is pinned by, printed in full so a player can compare it with what
    they recorded during play: the commitment, the fingerprint and the game stream's head."""

    commitment: str
    fingerprint: str
    head_version: int
    head_hash: str


_MARK = {"ok": "✓", "failed": "✗", "skipped": "-"}


@dataclass(frozen=True, slots=True)
class AuditReport:
    game_id: str | None
    steps: tuple[AuditStep, ...]
    anchors: Anchors | None = None  # set when every step passed

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
        """One line per step (and per fairness check), ✓ ok / ✗ failed / - skipped; on success,
        the full commitment, fingerprint and head to compare with what was recorded."""
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
        if failure is None and self.anchors is not None:
            a = self.anchors
            lines += [
                f"commitment:  {a.commitment}",
                f"fingerprint: {a.fingerprint}",
                f"head:        {a.head_version}:{a.head_hash}",
            ]
        return "\n".join(lines)


def _line(step: AuditStep, width: int, indent: str) -> str:
    where = f"v{step.version}: " if step.version is not None else ""
    text = f"{where}{step.reason}".strip()
    return f"{indent}{_MARK[step.status]} {step.name:<{width}}  {text}".rstrip()


class Failed(Exception):
    """A step found a problem: its reason, the event version to blame, and any sub-checks."""

    def __init__(
        self, reason: str, version: int | None = None, details: tuple[AuditStep, ...] = ()
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.version = version
        self.details = details
