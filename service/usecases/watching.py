"""Who may follow a game or a table, and how a browser opens a stream (issue 11, issue 13 §9).

Watching: anyone the table allows may follow its games without a seat. An online table is
public (anyone may look at it in the lobby), so anyone may watch its games, as a spectator
who sees nobody's hand; a solo table is its player's alone.

Stream tickets: a browser's `EventSource` cannot send an `Authorization` header, and a bearer
token in a URL ends up in proxy and server logs. So a client asks, with its token, for a
ticket scoped to one stream; the ticket goes in the stream's URL (`?ticket=`). It is random,
stored only as SHA-256, lives `TICKET_LIFETIME` (long enough for `EventSource`'s reconnects
after a dropped connection; ask for a new one after), and is tied to the token it was issued
for: a revoked or expired token ends its tickets.

Ending streams: an open stream re-checks its token when the token is revoked (logout sends a
wake-up named `revocation_channel(token_hash)` to every instance) and on every heartbeat tick
(expiry, or a missed wake-up), and ends when it is no longer valid.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Literal

import msgspec

from service.domain.bee_answers import seat_of
from service.domain.rules.engine import GameState
from service.usecases.context import Context, stream
from service.usecases.errors import Forbidden, Unauthorized
from service.usecases.identity import Player
from service.usecases.repository import Repository
from service.usecases.tables import require_seated

TICKET_LIFETIME = timedelta(minutes=5)

StreamKind = Literal["game", "table"]


class Viewer(msgspec.Struct, frozen=True):
    """Who follows a stream, and the token their access hangs on."""

    player: Player
    token_hash: bytes


class StreamTicket(msgspec.Struct, frozen=True, kw_only=True):
    ticket: str
    expires_at: datetime


def revocation_channel(token_hash: bytes) -> str:
    """The wake-up name that tells open streams of this token to check it again."""
    return "token-" + token_hash.hex()


async def viewer_seat(repository: Repository, state: GameState, player: Player) -> int | None:
    """The caller's seat in the game, or None for a spectator of a table that allows one."""
    seat = seat_of(state, player.player_id)
    if seat is not None:
        return seat
    table = await repository.table(state.table_id)
    if table.mode == "solo":
        raise Forbidden("A solo game is its player's alone.")
    return None


class Watching:
    def __init__(self, ctx: Context, repository: Repository) -> None:
        self.ctx = ctx
        self.repository = repository

    async def may_follow(self, player: Player, kind: StreamKind, ident: str) -> None:
        """Raises NotFound or Forbidden unless `player` may follow that stream now."""
        if kind == "game":
            await viewer_seat(self.repository, await self.repository.game(ident), player)
        else:
            table = await self.repository.table(ident)
            if table.mode == "solo":
                require_seated(table, player)

    async def issue_ticket(self, viewer: Viewer, kind: StreamKind, ident: str) -> StreamTicket:
        await self.may_follow(viewer.player, kind, ident)
        ticket = secrets.token_urlsafe(32)
        now = self.ctx.clock()
        expires_at = now + TICKET_LIFETIME
        await self.ctx.ports.tickets.issue(
            _hash(ticket), viewer.token_hash, stream(kind, ident), expires_at, now
        )
        return StreamTicket(ticket=ticket, expires_at=expires_at)

    async def redeem(self, ticket: str, kind: StreamKind, ident: str) -> Viewer:
        """The viewer a ticket was issued to, if it is for this stream, unexpired, and its token
        is still valid. It may be used again until it expires (EventSource reconnects)."""
        owner = await self.ctx.ports.tickets.redeem(
            _hash(ticket), stream(kind, ident), self.ctx.clock()
        )
        if owner is None:
            raise Unauthorized(
                "The stream ticket is not known, is for another stream, has expired, or its "
                "token was revoked; ask for a new one with your bearer token."
            )
        player = Player(player_id=owner.player_id, name=owner.name, registered=owner.registered)
        return Viewer(player=player, token_hash=owner.token_hash)

    async def still_valid(self, viewer: Viewer) -> bool:
        return await self.ctx.ports.tokens.valid(viewer.token_hash, self.ctx.clock())

    async def token_revoked(self, token_hash: bytes) -> None:
        """Tell every instance's open streams of this token to check it again (and end)."""
        await self.ctx.ports.tokens.announce(revocation_channel(token_hash))


def _hash(ticket: str) -> bytes:
    return hashlib.sha256(ticket.encode()).digest()
