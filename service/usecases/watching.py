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
from service.store.events import WAKEUP_CHANNEL
from service.usecases.context import Context, stream
from service.usecases.errors import Forbidden, Unauthorized
from service.usecases.identity import Player
from service.usecases.repository import Repository
from service.usecases.tables import require_seated

TICKET_LIFETIME = timedelta(minutes=5)

StreamKind = Literal["game", "table"]

_INSERT_TICKET = """
insert into stream_tickets (ticket_hash, token_hash, stream, expires_at) values ($1, $2, $3, $4)
"""
# The caller's own tickets that have run out: swept as new ones are issued, so the table stays
# as small as the number of tickets alive.
_SWEEP_TICKETS = "delete from stream_tickets where token_hash = $1 and expires_at <= $2"
_REDEEM_TICKET = """
select t.player_id, coalesce(a.name, t.name) as name, a.player_id is not null as registered,
       t.token_hash
  from stream_tickets k
  join access_tokens t on t.token_hash = k.token_hash
  left join accounts a on a.player_id = t.player_id
 where k.ticket_hash = $1 and k.stream = $2 and k.expires_at > $3
   and t.revoked_at is null and (t.expires_at is null or t.expires_at > $3)
"""
_TOKEN_VALID = """
select exists (select 1 from access_tokens
                where token_hash = $1 and revoked_at is null
                  and (expires_at is null or expires_at > $2))
"""
_NOTIFY = "select pg_notify($1, $2)"


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
        async with self.ctx.pool.acquire() as conn, conn.transaction():
            await conn.execute(_SWEEP_TICKETS, viewer.token_hash, now)
            await conn.execute(
                _INSERT_TICKET, _hash(ticket), viewer.token_hash, stream(kind, ident), expires_at
            )
        return StreamTicket(ticket=ticket, expires_at=expires_at)

    async def redeem(self, ticket: str, kind: StreamKind, ident: str) -> Viewer:
        """The viewer a ticket was issued to, if it is for this stream, unexpired, and its token
        is still valid. It may be used again until it expires (EventSource reconnects)."""
        row = await self.ctx.pool.fetchrow(
            _REDEEM_TICKET, _hash(ticket), stream(kind, ident), self.ctx.clock()
        )
        if row is None:
            raise Unauthorized(
                "The stream ticket is not known, is for another stream, has expired, or its "
                "token was revoked; ask for a new one with your bearer token."
            )
        player = Player(player_id=row["player_id"], name=row["name"], registered=row["registered"])
        return Viewer(player=player, token_hash=bytes(row["token_hash"]))

    async def still_valid(self, viewer: Viewer) -> bool:
        valid = await self.ctx.pool.fetchval(_TOKEN_VALID, viewer.token_hash, self.ctx.clock())
        return bool(valid)

    async def token_revoked(self, token_hash: bytes) -> None:
        """Tell every instance's open streams of this token to check it again (and end)."""
        await self.ctx.pool.execute(_NOTIFY, WAKEUP_CHANNEL, revocation_channel(token_hash))


def _hash(ticket: str) -> bytes:
    return hashlib.sha256(ticket.encode()).digest()
