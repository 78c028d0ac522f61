"""A finished game, for anyone to check: its export (every event with its chain hash, and the
revealed deal) and the server's own audit of it (`service.domain.audit`, the same code an
outsider runs on the export with `python -m service audit`)."""

from __future__ import annotations

import msgspec

from service.domain.audit import FORMAT as EXPORT_FORMAT
from service.domain.audit import AuditReport, ExportedEvent, FairnessRecord, GameExport, audit
from service.domain.rules import errors as rule_errors
from service.domain.rules.events import DealRevealed, GameStarted, decode_event
from service.usecases.context import Context, stream
from service.usecases.repository import Repository


class Exports:
    def __init__(self, ctx: Context, repository: Repository) -> None:
        self.ctx = ctx
        self.repository = repository

    async def export_game(self, game_id: str) -> GameExport:
        """The whole finished game: its events with their hashes, and the revealed deal.
        Anyone may export a game once it is over; before that it would give hands away."""
        state = await self.repository.game(game_id)
        if state.phase != "ended":
            raise rule_errors.GameNotOver("A game is exported once it has ended.")
        recorded = await self.ctx.store.read_stream(stream("game", game_id))
        events = [decode_event(r.data) for r in recorded]
        started = next(e for e in events if isinstance(e, GameStarted))
        revealed = next((e for e in events if isinstance(e, DealRevealed)), None)
        if started.proof is None or revealed is None:
            raise rule_errors.GameNotOver("This game was dealt before fair deals were recorded.")
        proof = started.proof
        return GameExport(
            format=EXPORT_FORMAT,
            game_id=game_id,
            table_id=state.table_id,
            events=tuple(
                ExportedEvent(
                    version=r.version,
                    type=r.type,
                    recorded_at=r.recorded_at,
                    hash=r.hash.hex(),
                    data=msgspec.json.decode(r.data),
                )
                for r in recorded
            ),
            fairness=FairnessRecord(
                scheme=proof.scheme,
                commitment=proof.commitment,
                client_seeds=proof.client_seeds,
                transcript=proof.transcript,
                fingerprint=proof.fingerprint,
                server_seed=revealed.server_seed,
                deck_order=revealed.deck_order,
                hands=started.hands,
                stems=started.stems,
            ),
        )

    async def verify_game(self, game_id: str) -> AuditReport:
        """The server's own verdict on a finished game: the same audit an outsider runs on the
        export, over the events as stored now."""
        return audit(msgspec.to_builtins(await self.export_game(game_id)))
