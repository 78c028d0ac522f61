"""Who the caller is: guests (a name and a bearer token, no account needed) and the check of a
bearer token on every request.

Tokens are random, stored only as SHA-256 (`access_tokens`), expire after `TOKEN_LIFETIME` and
can be revoked (logout). The check is not cached: a logout on any instance stops the token on
every instance at once."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import timedelta

import msgspec

from service.store.events import NewEvent, StreamAppend
from service.usecases.context import Context, stream
from service.usecases.errors import Unauthorized

TOKEN_LIFETIME = timedelta(days=30)

_INSERT_TOKEN = (
    "insert into access_tokens (token_hash, player_id, name, expires_at) values ($1, $2, $3, $4)"
)
_AUTHENTICATE = """
select t.player_id, coalesce(a.name, t.name) as name, a.player_id is not null as registered
  from access_tokens t
  left join accounts a on a.player_id = t.player_id
 where t.token_hash = $1
   and t.revoked_at is null
   and (t.expires_at is null or t.expires_at > $2)
"""


class Player(msgspec.Struct, frozen=True):
    player_id: str
    name: str
    registered: bool = False  # an account (not only a guest): needed for buy-in tables


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


class Identity:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def create_guest(self, name: str) -> tuple[Player, str]:
        """A new guest (stream `player-<id>`, `guest_created`) and its bearer token."""
        player = Player(player_id=str(uuid.uuid4()), name=name)
        token = new_token()
        joined = NewEvent(
            type="guest_created",
            data=msgspec.json.encode({"player_id": player.player_id, "name": name}),
        )
        await self.ctx.store.append(
            StreamAppend(
                stream=stream("player", player.player_id), expected_version=0, events=[joined]
            ),
            metadata={"actor": player.player_id},
        )
        # The token is written after the player exists, so a failure leaves no usable token.
        await self.ctx.pool.execute(
            _INSERT_TOKEN,
            token_hash(token),
            player.player_id,
            name,
            self.ctx.clock() + TOKEN_LIFETIME,
        )
        return player, token

    async def authenticate(self, token: str) -> Player:
        """The player behind a bearer token, if it is known, unexpired and not revoked."""
        row = await self.ctx.pool.fetchrow(_AUTHENTICATE, token_hash(token), self.ctx.clock())
        if row is None:
            raise Unauthorized("The bearer token is not known, has expired or was revoked.")
        return Player(player_id=row["player_id"], name=row["name"], registered=row["registered"])
