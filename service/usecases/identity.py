"""Who the caller is: guests (a name and a bearer token, no account needed) and the check of a
bearer token on every request.

Tokens are random, stored only as SHA-256 (`access_tokens`), expire after `TOKEN_LIFETIME` and
can be revoked (logout). The check is not cached: a logout on any instance stops the token on
every instance at once. What an instance remembers is only whose a token is (a fact that never
changes), so that a move can carry its check inside its own append (`TokenCheck`, migration
0014) instead of a query before it.

Names are checked and normalised by `service.domain.names`. New identities are limited per
client address across every instance (`SignUpLimit`: guests and accounts each have their own
budget an hour), so one client cannot mint players (or the sign-up grant) without bound."""

from __future__ import annotations

import hashlib
import math
import secrets
import uuid
from collections import OrderedDict
from datetime import datetime, timedelta

import msgspec

from service.domain.names import display_name
from service.store.log import NewEvent, StreamAppend
from service.store.rows import AccessToken, TokenGuard
from service.usecases.context import Context, stream
from service.usecases.errors import Unauthorized

TOKEN_LIFETIME = timedelta(days=30)
SIGN_UP_WINDOW = timedelta(hours=1)
# New identities an hour per client address (0: no limit); the variables override them.

_KNOWN_TOKENS = 100_000  # token hashes whose player this instance remembers


class Player(msgspec.Struct, frozen=True):
    player_id: str
    name: str
    registered: bool = False  # an account (not only a guest): needed for buy-in tables


class TokenCheck:
    """The bearer-token check of a write, made inside the write's own statement (`guard`, one
    round trip fewer) for a caller this instance has authenticated before; `verify()` makes it
    on its own, for any answer that does not come from such a write. Exact either way: a token
    revoked on any instance fails at once (`GuardRefused` from the write, else `Unauthorized`),
    and `service.usecases.play` answers nothing before one of the two has passed."""

    def __init__(
        self, identity: Identity, token: str, player: Player, hashed: bytes | None = None
    ) -> None:
        self.identity = identity
        self.token = token
        self.player = player
        self.hashed = hashed if hashed is not None else token_hash(token)

    def guard(self) -> TokenGuard:
        """The check as the guard of an append (`EventLog.append(guard=...)`)."""
        return TokenGuard(
            token_hash=self.hashed,
            player_id=self.player.player_id,
            at=self.identity.ctx.clock(),
        )

    async def verify(self) -> None:
        """The check as its own query; raises `Unauthorized` (and forgets the token)."""
        if (await self.identity.authenticate(self.token)).player_id != self.player.player_id:
            raise AssertionError("a token's player never changes")  # pragma: no cover


class TooManySignUps(Exception):
    """Too many new guests or accounts from this address this hour (429 with Retry-After)."""

    def __init__(self, what: str, retry_after: int) -> None:
        super().__init__(f"Too many new {what} from your address; try again in {retry_after} s.")
        self.what = what
        self.retry_after = retry_after


class SignUpLimit:
    """At most `per_hour` new identities of one kind per client address in any hour, counted
    in the store (so across instances), taking turns per key, before the work is done."""

    def __init__(self, ctx: Context, kind: str, per_hour: int) -> None:
        self.ctx = ctx
        self.kind = kind
        self.per_hour = per_hour

    async def count(self, address: str | None) -> None:
        """Count one sign-up from `address` (None: not a client's, not counted)."""
        if address is None or self.per_hour <= 0:
            return
        key, now = f"{self.kind}:{address}", self.ctx.clock()
        oldest = await self.ctx.ports.sign_ups.count(key, now, now - SIGN_UP_WINDOW, self.per_hour)
        if oldest is not None:
            raise TooManySignUps(f"{self.kind}s", _seconds_until(oldest, now))


def _seconds_until(oldest: datetime, now: datetime) -> int:
    return max(1, math.ceil((oldest + SIGN_UP_WINDOW - now).total_seconds()))


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


class Identity:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.guests = SignUpLimit(ctx, "guest", ctx.guests_per_hour)
        # Token hash → the player it was issued to, as last authenticated here: who a token
        # belongs to never changes, so this is a fact, never a verdict on the token (see
        # `check`); least recently used dropped first.
        self._players: OrderedDict[bytes, Player] = OrderedDict()

    def check(self, token: str) -> TokenCheck | None:
        """The token's check, to be made with the caller's write, if this instance has seen
        the token valid before (so knows whose it is); None: `authenticate` it first."""
        hashed = token_hash(token)
        player = self._players.get(hashed)
        return None if player is None else TokenCheck(self, token, player, hashed)

    def forget(self, token: str) -> None:
        self._players.pop(token_hash(token), None)

    async def create_guest(self, name: str, address: str | None = None) -> tuple[Player, str]:
        """A new guest (stream `player-<id>`, `guest_created`) and its bearer token; `name` as
        `service.domain.names` shows it. Refused past the per-address limit (`address`)."""
        player, token, _ = await self.create_guest_session(name, address)
        return player, token

    async def create_guest_session(
        self, name: str, address: str | None = None
    ) -> tuple[Player, str, datetime]:
        """`create_guest`, with when the token expires."""
        name = display_name(name)
        await self.guests.count(address)
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
        expires_at = self.ctx.clock() + TOKEN_LIFETIME
        await self.ctx.ports.tokens.issue(
            AccessToken(
                token_hash=token_hash(token),
                player_id=player.player_id,
                name=name,
                expires_at=expires_at,
            )
        )
        return player, token, expires_at

    async def authenticate(self, token: str) -> Player:
        """The player behind a bearer token, if it is known, unexpired and not revoked."""
        hashed = token_hash(token)
        owner = await self.ctx.ports.tokens.owner(hashed, self.ctx.clock())
        if owner is None:
            self._players.pop(hashed, None)
            raise Unauthorized(TOKEN_REFUSED)
        player = Player(player_id=owner.player_id, name=owner.name, registered=owner.registered)
        self._players[hashed] = player
        self._players.move_to_end(hashed)
        while len(self._players) > _KNOWN_TOKENS:
            self._players.popitem(last=False)
        return player


TOKEN_REFUSED = "The bearer token is not known, has expired or was revoked."
