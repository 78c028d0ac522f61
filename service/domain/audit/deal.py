"""Step 3, `fairness`: the deal is the scheme's, and the game played is that deal.

`fairness.verify` re-derives the published values (its five steps are this step's details);
then the game's own events must carry exactly them: `game_started`'s proof, hands and stems, and
`deal_revealed`'s server seed and deck order. A fingerprint the player recorded before turn 1
must be the one the proof publishes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.domain import fairness
from service.domain.audit.expect import Expectations
from service.domain.audit.export import Decoded, Row
from service.domain.audit.report import AuditStep, Failed
from service.domain.audit.text import bees, differences
from service.domain.rules.events import DealProof, DealRevealed, GameStarted


def check_fairness(decoded: Decoded, expect: Expectations) -> tuple[str, tuple[AuditStep, ...]]:
    export, record = decoded.export, decoded.export.fairness
    started = _only(decoded.rows, GameStarted, "the deal (game_started)")
    revealed = _only(decoded.rows, DealRevealed, "the revealed seed (deal_revealed)")
    if record.scheme != fairness.SCHEME_VERSION:
        raise Failed(
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
        raise Failed(f"{failed.name}: {failed.reason}", details=details)

    proof = DealProof(
        scheme=record.scheme,
        commitment=record.commitment,
        client_seeds=record.client_seeds,
        transcript=record.transcript,
        fingerprint=record.fingerprint,
    )
    if game.proof is None:
        raise Failed("the game was dealt without a proof", started.version, details)
    if game.proof != proof:
        raise Failed(
            "the proof published before turn 1 differs from the fairness record in "
            + differences(game.proof, proof),
            started.version,
            details,
        )
    if expect.fingerprint is not None and game.proof.fingerprint != expect.fingerprint:
        raise Failed(
            f"you recorded the fingerprint {expect.fingerprint} before turn 1; the export's "
            f"game was dealt with {game.proof.fingerprint}",
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
        raise Failed(
            f"seat {seat}'s hand in the game is not the one the fair deal gives it",
            started.version,
            details,
        )
    if tuple(game.stems) != record.stems:
        raise Failed(
            f"the game's stems {bees(game.stems)} are not the fair deal's {bees(record.stems)}",
            started.version,
            details,
        )
    reveal = revealed.event
    assert isinstance(reveal, DealRevealed)
    if reveal.server_seed != record.server_seed:
        raise Failed(
            "the server seed revealed in the game is not the published one",
            revealed.version,
            details,
        )
    if tuple(reveal.deck_order) != record.deck_order:
        raise Failed(
            "the deck order revealed in the game is not the published one",
            revealed.version,
            details,
        )
    return _summary(record.client_seeds), details


def _summary(client_seeds: Sequence[str | None]) -> str:
    contributed = sum(seed is not None for seed in client_seeds)
    caveat = (
        "" if contributed else "; with no seed contributed, the server could have chosen this deal"
    )
    return (
        f"the deal is the scheme's, locked in before turn 1 ({contributed} of "
        f"{len(client_seeds)} seats contributed a seed{caveat})"
    )


def _only(rows: Sequence[Row], kind: type[Any], what: str) -> Row:
    found = [row for row in rows if isinstance(row.event, kind)]
    if not found:
        raise Failed(f"the export has no {what}")
    if len(found) > 1:
        raise Failed(f"the export has more than one {what}", found[1].version)
    return found[0]
