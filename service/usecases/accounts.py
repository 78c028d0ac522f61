"""Accounts: registration, login and logout (seed §9). Profiles and the leaderboard are in
`service.usecases.profiles`.

A guest needs no account; an account (a name and a password) is needed for buy-in tables and
keeps coins, XP and badges. A guest who registers keeps their player id and plays on under the
same identity: `account_registered` is appended to their own `player-<id>` stream, and the
sign-up grant (`coins_granted`, reason `sign_up`) opens their `wallet-<id>`, both in one
append with the `accounts`, `wallets`, `player_stats` and `access_tokens` rows.

Passwords are hashed with argon2id (argon2-cffi's defaults), off the event loop, and are never
logged or returned. Bearer tokens are random, stored only as SHA-256, expire after
`TOKEN_LIFETIME` and can be revoked (logout); `Identity.authenticate` checks both on every
request, so a logout stops a token on every instance at once.

Names follow `service.domain.names`: shown NFKC-normalised, unique among accounts by their key
(the TS #39 skeleton of the case-folded name, `accounts.name_key`), which login looks up too;
the database never folds case itself. Registrations are limited per client address
(`SignUpLimit`, "account"), which also bounds the sign-up grants one client can collect.

Guessing is slowed per account name and per client address: at `MAX_FAILURES` failed logins
within `FAILURE_WINDOW` for either, further attempts are refused (429 with Retry-After) before
the password is even looked at. Each attempt is counted *before* its password is checked (and
the count is taken under a lock per key), so a burst of parallel guesses cannot slip past the
limit; a successful attempt withdraws only its own count, never earlier failures.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import uuid
from datetime import datetime, timedelta

import msgspec
import structlog
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from service.domain.ledger import (
    SIGN_UP_COINS,
    CoinsGranted,
    PlayerStats,
    WalletState,
    encode_wallet_event,
    evolve_wallet,
    wallet_event_type,
)
from service.domain.names import InvalidName, display_name
from service.domain.names import name_key as _name_key
from service.domain.refusals import Malformed, NotAllowedNow
from service.store.confusables import prototypes
from service.store.log import ConcurrencyConflict, NewEvent, StreamAppend, UniqueViolation
from service.store.rows import (
    ACCOUNT_TAKEN,
    NAME_TAKEN,
    AccessToken,
    Account,
    Row,
    Standing,
    WalletBalance,
)
from service.usecases.context import Context
from service.usecases.errors import Unauthorized
from service.usecases.identity import (
    TOKEN_LIFETIME,
    Player,
    SignUpLimit,
    new_token,
    token_hash,
)

log = structlog.get_logger(__name__)

PASSWORD_MIN, PASSWORD_MAX = 8, 128
MAX_FAILURES = 5  # failed logins per name or per address within the window...
FAILURE_WINDOW = timedelta(minutes=15)  # ...after which further attempts are refused (429)
MAX_CONCURRENT_HASHES = 4  # argon2id takes 64 MiB and ~0.1 s of CPU per hash: bound the work

# --- errors ----------------------------------------------------------------------------------


class InvalidAccount(Malformed):
    code = "invalid-account"
    title = "The name or password does not meet the rules"


class NameTaken(NotAllowedNow):
    code = "name-taken"
    title = "That name is already taken"


class AlreadyRegistered(NotAllowedNow):
    code = "already-registered"
    title = "This player already has an account"


class InvalidCredentials(Unauthorized):
    """Wrong name or wrong password: the same message for both, so names cannot be probed."""

    def __init__(self) -> None:
        super().__init__("The name or the password is wrong.")


class TooManyAttempts(Exception):
    """Too many failed logins for this name or address; try again after `retry_after` s."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"Too many failed logins; try again in {retry_after} s.")
        self.retry_after = retry_after


# --- what callers get ------------------------------------------------------------------------


class Session(msgspec.Struct, frozen=True, kw_only=True):
    player: Player
    token: str
    expires_at: datetime


# --- pure rules ------------------------------------------------------------------------------


def check_registration(name: str, password: str) -> str:
    """The name and password rules; the name as it will be stored and shown."""
    shown = display_name(name)  # InvalidName (invalid-name) when it breaks the name rules
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise InvalidAccount(f"A password is {PASSWORD_MIN} to {PASSWORD_MAX} characters.")
    return shown


def name_key(name: str) -> str:
    """The key an account name is stored and looked up by (`accounts.name_key`)."""
    return _name_key(name, prototypes())


def login_key(name: str) -> str | None:
    """The `name_key` a typed name looks up (None: no account can have it)."""
    try:
        return name_key(display_name(name))
    except InvalidName:
        return None


def failure_keys(name: str, address: str) -> list[str]:
    """The `login_failures` keys one attempt counts against, in lock order."""
    key = login_key(name)
    return sorted({f"name:{key if key is not None else name}", f"addr:{address}"})


def seconds_until(moment: datetime, now: datetime) -> int:
    """Whole seconds from `now` until `moment`, rounded up, at least 1 (for Retry-After)."""
    return max(1, math.ceil((moment - now).total_seconds()))


def sign_up_wallet() -> tuple[CoinsGranted, WalletState]:
    grant = CoinsGranted(amount=SIGN_UP_COINS, reason="sign_up")
    return grant, evolve_wallet(WalletState(), grant)


class Accounts:
    """The account use cases. Stateless apart from the hashing limit: any number of instances
    may serve the same database."""

    REGISTER_RETRIES = 3

    def __init__(self, ctx: Context, *, hasher: PasswordHasher | None = None) -> None:
        self.store = ctx.store
        self.accounts = ctx.ports.accounts
        self.logins = ctx.ports.logins
        self.tokens = ctx.ports.tokens
        self.clock = ctx.clock
        self.hasher = hasher or PasswordHasher()  # argon2id, the library's default parameters
        self._hashing = asyncio.Semaphore(MAX_CONCURRENT_HASHES)
        self._dummy_hash: str | None = None
        self.sign_ups = SignUpLimit(ctx, "account", ctx.accounts_per_hour)

    # --- registration -------------------------------------------------------------------------

    async def register(
        self, name: str, password: str, guest: Player | None, address: str | None = None
    ) -> Session:
        """A new account; with `guest`, that guest's identity becomes the account (their player
        id, streams and tokens stay). Refused if the name is taken (by its key: look-alikes,
        case and spacing are the same name), the player already registered, or `address` has
        registered too many accounts this hour (`TooManySignUps`)."""
        name = check_registration(name, password)
        key = name_key(name)
        if guest is not None and (
            guest.registered or await self.accounts.registered(guest.player_id)
        ):
            raise AlreadyRegistered("You already have an account; log in instead.")
        if await self.accounts.name_taken(key):
            raise NameTaken(f"The name {name!r} is taken; choose another.")
        await self.sign_ups.count(address)
        password_hash = await self._hash(password)

        player_id = guest.player_id if guest is not None else str(uuid.uuid4())
        player = Player(player_id=player_id, name=name, registered=True)
        grant, wallet = sign_up_wallet()
        token = new_token()
        expires_at = self.clock() + TOKEN_LIFETIME
        registered = NewEvent(
            type="account_registered",
            data=msgspec.json.encode({"player_id": player_id, "name": name}),
        )
        granted = NewEvent(type=wallet_event_type(grant), data=encode_wallet_event(grant))
        also: list[Row] = [
            Account(player_id=player_id, name=name, password_hash=password_hash, name_key=key),
            WalletBalance.of(player_id, wallet),
            Standing.of(player_id, name, PlayerStats()),
            AccessToken(
                token_hash=token_hash(token), player_id=player_id, name=name, expires_at=expires_at
            ),
        ]
        for attempt in range(self.REGISTER_RETRIES):
            # A guest's stream already holds `guest_created` (and maybe more): append after it.
            version = (
                await self.store.stream_version(f"player-{player_id}") if guest is not None else 0
            )
            try:
                await self.store.append(
                    StreamAppend(
                        stream=f"player-{player_id}", expected_version=version, events=[registered]
                    ),
                    StreamAppend(
                        stream=f"wallet-{player_id}", expected_version=0, events=[granted]
                    ),
                    metadata={"actor": player_id},
                    also=also,
                )
            except ConcurrencyConflict as exc:
                if exc.stream == f"wallet-{player_id}":
                    raise AlreadyRegistered("You already have an account; log in instead.") from exc
                if attempt + 1 == self.REGISTER_RETRIES:
                    raise
                continue  # the player's stream moved on meanwhile: append after its new head
            except UniqueViolation as exc:
                if exc.constraint == NAME_TAKEN:
                    raise NameTaken(f"The name {name!r} is taken; choose another.") from exc
                if exc.constraint == ACCOUNT_TAKEN:
                    raise AlreadyRegistered("You already have an account; log in instead.") from exc
                raise
            break
        log.info("account registered", player_id=player_id, was_guest=guest is not None)
        return Session(player=player, token=token, expires_at=expires_at)

    # --- sessions -----------------------------------------------------------------------------

    async def login(self, name: str, password: str, address: str) -> Session:
        """A fresh token for the account, if the password is right. Refused with
        `TooManyAttempts` while the name or the address has too many recent failures."""
        now = self.clock()
        keys = failure_keys(name, address)
        await self._count_attempt(keys, now)

        key = login_key(name)
        account = await self.accounts.by_name(key, name) if key is not None else None
        # An unknown name costs a hash check too, so timing does not tell names apart.
        stored = account.password_hash if account is not None else await self._dummy()
        if not await self._verify(stored, password) or account is None:
            log.info("login failed", address=address)
            raise InvalidCredentials()
        if account.name_key is None and key is not None:  # unless a newer account has it
            await self.accounts.set_name_key(account.player_id, key)

        player = Player(player_id=account.player_id, name=account.name, registered=True)
        token = new_token()
        expires_at = now + TOKEN_LIFETIME
        # This attempt succeeded: its own count is withdrawn (nothing older), with its token.
        issued = AccessToken(
            token_hash=token_hash(token),
            player_id=player.player_id,
            name=player.name,
            expires_at=expires_at,
        )
        await self.logins.succeeded(keys, now, issued)
        log.info("logged in", player_id=player.player_id)
        return Session(player=player, token=token, expires_at=expires_at)

    async def logout(self, token: str) -> None:
        """Revoke this token (only this one: other devices stay logged in)."""
        await self.tokens.revoke(token_hash(token), self.clock())

    async def _count_attempt(self, keys: list[str], now: datetime) -> None:
        """Refuse if any key has too many recent failures; else count this attempt as a
        failure until it proves otherwise. Taking turns per key, so parallel attempts count
        in turn."""
        blocking = await self.logins.attempt(keys, now, now - FAILURE_WINDOW, MAX_FAILURES)
        if blocking is not None:
            raise TooManyAttempts(seconds_until(blocking + FAILURE_WINDOW, now))

    # --- hashing (slow on purpose: off the event loop, a few at a time) -----------------------

    async def _hash(self, password: str) -> str:
        async with self._hashing:
            return await asyncio.to_thread(self.hasher.hash, password)

    async def _verify(self, stored: str, password: str) -> bool:
        async with self._hashing:
            try:
                return await asyncio.to_thread(self.hasher.verify, stored, password)
            except (VerificationError, InvalidHashError):
                return False

    async def _dummy(self) -> str:
        if self._dummy_hash is None:
            self._dummy_hash = await self._hash(secrets.token_urlsafe(16))
        return self._dummy_hash
