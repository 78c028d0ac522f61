"""HTTP handlers for accounts, sessions, profiles and the leaderboard
(service/usecases/accounts.py and profiles.py).

Register these controllers with `create_app` (see `ACCOUNT_CONTROLLERS`); they bring their
own `accounts` dependency, built on the game service's store, pool and clock. Passwords arrive
in bodies only, which are never logged, and are never returned.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.exceptions import ValidationException
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody, QueryParameter
from litestar.response import Stream

from service.api.answers import (
    HistoryPage,
    LeaderboardPage,
    MyGames,
    Profile,
    PublicProfile,
    history_page,
    leaderboard_page,
    my_games,
    profile,
    public_profile,
)
from service.api.bodies import NO_STORE, TEXT_PATTERN, Name
from service.api.dependencies import AUTH, BODY, Caller, PlayerId, Service, strict_body
from service.api.limits import client_address
from service.api.problems import problem, refuses
from service.bootstrap import Swarm
from service.domain.names import InvalidName
from service.store.rows import Reach
from service.usecases.accounts import (
    PASSWORD_MAX,
    PASSWORD_MIN,
    Accounts,
    AlreadyRegistered,
    InvalidAccount,
    InvalidCredentials,
    NameTaken,
    Session,
    TooManyAttempts,
)
from service.usecases.errors import NotFound, Unauthorized
from service.usecases.identity import Player, TooManySignUps, token_hash
from service.usecases.my_games import HistoryKind
from service.usecases.profiles import LeaderboardOrder

Password = Annotated[
    str,
    msgspec.Meta(
        min_length=PASSWORD_MIN,
        max_length=PASSWORD_MAX,
        pattern=TEXT_PATTERN,
        description=f"{PASSWORD_MIN} to {PASSWORD_MAX} characters (any but NUL)",
    ),
]
# Logging in checks a password against what was stored; only the upper bound is enforced.
AnyPassword = Annotated[
    str, msgspec.Meta(min_length=1, max_length=PASSWORD_MAX, pattern=TEXT_PATTERN)
]


NDJSON = "application/x-ndjson"
NDJSON_DESCRIPTION = (
    "Newline-delimited JSON: one line per game, newest first, each a `GameExport` (exportGame's "
    "document), so `swarm audit` reads each line."
)
_NDJSON_ENCODER = msgspec.json.Encoder()


# RFC 3339's date-time (what `format: date-time` means), its offset required, at most
# microseconds (what PostgreSQL keeps): the exact rule, in the document as the parameter's
# pattern. An answer's own times (`ended_at`) read back as such.
RFC3339 = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})$"
)


def _moment(name: str, value: str | None) -> datetime | None:
    """A query's time (its pattern checked) as a UTC datetime; 400 for a date that does not
    exist (a 13th month) or one outside the years 1 to 9999 once in UTC."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value).astimezone(UTC)
    except (ValueError, OverflowError):
        raise ValidationException(
            f"{name}: not a time between the years 1 and 9999 (UTC): {value[:40]!r}"
        ) from None


class RegisterIn(msgspec.Struct, forbid_unknown_fields=True):
    """A new account's name and password.

    Attributes:
        name: The account's name: unique among accounts, case-insensitively.
        password: The account's password.
    """

    name: Name  # unique among accounts: look-alikes, case and spacing make the same name
    password: Password


class LoginIn(msgspec.Struct, forbid_unknown_fields=True):
    """An account's name and password.

    Attributes:
        name: The account's name (case-insensitive).
        password: The account's password.
    """

    name: Name  # as registered, or any look-alike: case and spacing do not matter
    password: AnyPassword


class SessionOut(msgspec.Struct, kw_only=True):
    """A logged-in session: who you are and your new bearer token.

    Attributes:
        player_id: Your player id.
        name: Your name.
        registered: The player has an account (not only a guest).
        token: Send as `Authorization: Bearer <token>`
        expires_at: Log in again after it.
    """

    player_id: str
    name: str
    registered: bool
    token: str  # send as `Authorization: Bearer <token>`
    expires_at: datetime  # log in again after it


def provide_accounts(state: State) -> Accounts:
    """The app's `Accounts` (built with the rest of the use cases in the lifespan)."""
    service: Swarm = state.service
    return service.accounts


Users = NamedDependency[Accounts]

DEPENDENCIES = {"accounts": Provide(provide_accounts, sync_to_thread=False)}

OPTIONAL_AUTH: list[dict[str, list[str]]] = [{}, {"bearer": []}]


def _bearer(request: Request[Any, Any, Any]) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _session_out(session: Session) -> SessionOut:
    return SessionOut(
        player_id=session.player.player_id,
        name=session.player.name,
        registered=session.player.registered,
        token=session.token,
        expires_at=session.expires_at,
    )


class AccountController(Controller):
    path = "/accounts"
    before_request = staticmethod(strict_body)
    tags = ["accounts"]
    dependencies = DEPENDENCIES
    security = OPTIONAL_AUTH

    @post(
        "/",
        operation_id="register",
        summary="Create an account",
        cache_control=NO_STORE,
        status_code=201,
        opt={BODY: "The account's name and password."},
    )
    @refuses(
        InvalidName,
        InvalidAccount,
        NameTaken,
        AlreadyRegistered,
        TooManySignUps,
        "concurrent-change",
    )
    async def register(
        self,
        data: JSONBody[RegisterIn],
        request: Request[Any, Any, Any],
        service: Service,
        accounts: Users,
    ) -> SessionOut:
        """Create an account with a unique name (case-insensitive) and a password of 8 to 128
        characters; it starts with 1000 coins. Send your guest token to keep your guest
        identity: same player id, and your guest token keeps working. Without a token, a new
        player is created. Returns a fresh token, valid for 30 days. 409 `name-taken`, or
        `already-registered` if this player has an account already."""
        token = _bearer(request)
        guest: Player | None = await service.identity.authenticate(token) if token else None
        session = await accounts.register(data.name, data.password, guest, client_address(request))
        return _session_out(session)


class SessionController(Controller):
    path = "/sessions"
    before_request = staticmethod(strict_body)
    tags = ["accounts"]
    dependencies = DEPENDENCIES

    @post(
        "/",
        operation_id="login",
        summary="Log in",
        cache_control=NO_STORE,
        status_code=201,
        opt={BODY: "The account's name and password."},
    )
    @refuses(InvalidName, "invalid-credentials", "too-many-logins")
    async def login(
        self, data: JSONBody[LoginIn], request: Request[Any, Any, Any], accounts: Users
    ) -> SessionOut:
        """Log in with a name and password: a fresh bearer token, valid for 30 days. After 5
        failed logins for one name, or from one address, within 15 minutes, further attempts
        are refused with 429 (see `Retry-After`) without checking the password."""
        address = client_address(request)
        try:
            session = await accounts.login(data.name, data.password, address)
        except TooManyAttempts as exc:
            raise problem(
                429,
                "too-many-logins",
                str(exc),
                **{"Retry-After": str(exc.retry_after)},
            ) from None
        except InvalidCredentials as exc:
            raise problem(401, "invalid-credentials", str(exc)) from None
        return _session_out(session)

    @delete(
        "/current",
        operation_id="logout",
        summary="Log out (revoke this token)",
        status_code=204,
        security=AUTH,
    )
    @refuses()
    async def logout(
        self, request: Request[Any, Any, Any], player: Caller, service: Service, accounts: Users
    ) -> None:
        """Revoke the token this request carries, at once, on every server instance, with its
        stream tickets; streams opened with it are closed. Other tokens of the same player
        (other devices) stay valid."""
        token = _bearer(request)
        if token is None:  # pragma: no cover - `player` already required one
            raise Unauthorized("Send `Authorization: Bearer <token>`.")
        await accounts.logout(token)
        await service.watching.token_revoked(token_hash(token))


class ProfileController(Controller):
    path = "/"
    before_request = staticmethod(strict_body)
    tags = ["players"]
    dependencies = DEPENDENCIES
    security = AUTH

    @get("/me", operation_id="getMe", summary="Your profile and coins")
    @refuses()
    async def get_me(self, player: Caller, service: Service) -> Profile:
        """Your own profile: name, whether you have an account, coins (spendable and held for
        buy-in tables), XP and level (1 + XP ÷ 500), badges, online games played and won.
        Always the caller's: there is no way to read another's."""
        return profile(await service.profiles.me(player))

    @get("/me/games", operation_id="listMyGames", summary="The tables and games you sit at")
    @refuses()
    async def list_my_games(self, player: Caller, service: Service) -> MyGames:
        """The tables you sit at now, solo ones included, most recently joined first, each
        with its current game (its id, phase and turn) and whether it waits for your move:
        what a client reloads to resume. While part of the database is away (a worker of a
        Citus cluster), the tables of the rest, with `partial` true."""
        reach = Reach()
        return my_games(await service.my_games.list(player, reach), reach.partial)

    @get("/me/history", operation_id="listMyHistory", summary="The games you have played")
    @refuses()
    async def list_my_history(
        self,
        player: Caller,
        service: Service,
        kind: Annotated[
            HistoryKind,
            QueryParameter(description="All your finished games, or the rated or casual ones"),
        ] = "all",
        limit: Annotated[int, QueryParameter(ge=1, le=100)] = 20,
        offset: Annotated[int, QueryParameter(ge=0, le=1_000_000)] = 0,
    ) -> HistoryPage:
        """Your finished games, solo ones included, newest first, a page at a time
        (`next_offset` is null on the last page): when each ended, its seats (people by name,
        bee players by level), your place and stings, what it did to your rating, and the
        paths of its replay (listGameSteps) and its export (exportGame). While part of the
        database is away (a worker of a Citus cluster), the games of the rest, with `partial`
        true (503 while your own record's part is away)."""
        reach = Reach()
        games = await service.my_games.history(player, kind, limit + 1, offset, reach)
        return history_page(games, kind, limit, offset, reach.partial)

    @get(
        "/players/{player_id:uuid}",
        operation_id="getPlayer",
        summary="A player's public profile",
    )
    @refuses(NotFound)
    async def get_player(
        self, player_id: PlayerId, player: Caller, service: Service
    ) -> PublicProfile:
        """Anyone's public profile: name, level, XP, badges, games played and won (never
        their coins)."""
        return public_profile(await service.profiles.player(str(player_id)))

    @get(
        "/players/{player_id:uuid}/games",
        operation_id="exportPlayerGames",
        summary="A player's finished games in bulk (NDJSON)",
        responses={
            200: ResponseSpec(
                data_container=str,
                description=NDJSON_DESCRIPTION,
                media_type=NDJSON,
                generate_examples=False,
            )
        },
    )
    @refuses(NotFound)
    async def export_player_games(
        self,
        player_id: PlayerId,
        player: Caller,
        service: Service,
        since: Annotated[
            str | None,
            QueryParameter(
                pattern=RFC3339,
                format="date-time",
                description="Only games that ended at or after this time (RFC 3339, with its "
                "offset: `2026-12-07T10:00:00Z`)",
            ),
        ] = None,
        until: Annotated[
            str | None,
            QueryParameter(
                pattern=RFC3339,
                format="date-time",
                description="Only games that ended before this time (RFC 3339, with its offset)",
            ),
        ] = None,
        max: Annotated[  # lichess's name for it
            int | None,
            QueryParameter(ge=1, le=100_000, description="At most this many games"),
        ] = None,
    ) -> Stream:
        """A player's finished games, newest first, as NDJSON (`application/x-ndjson`): one
        line per game, each exactly the document exportGame gives (its events with their
        hash-chain links and the revealed deal), so `swarm audit` reads each line. Yours
        include your solo games; another player's are their online games alone. `since`
        (included) and `until` (excluded) bound when the games ended; `max` caps how many.
        404 for a player nobody knows."""
        await service.profiles.player(str(player_id))  # 404 for a player nobody knows
        exports = await service.exports.player_games(
            str(player_id),
            player,
            since=_moment("since", since),
            until=_moment("until", until),
            most=max,
        )

        async def lines() -> AsyncIterator[bytes]:
            async for exported in exports:
                yield _NDJSON_ENCODER.encode(exported) + b"\n"

        return Stream(lines(), media_type=NDJSON)

    @get("/leaderboard", operation_id="listLeaderboard", summary="The leaderboard")
    @refuses()
    async def list_leaderboard(
        self,
        player: Caller,
        service: Service,
        by: Annotated[
            LeaderboardOrder,
            QueryParameter(
                description="Rank by games won (then XP), by XP (then wins), or by rating"
            ),
        ] = "wins",
        limit: Annotated[int, QueryParameter(ge=1, le=100)] = 20,
        offset: Annotated[int, QueryParameter(ge=0, le=1_000_000)] = 0,
    ) -> LeaderboardPage:
        """Players ranked by online games won or by XP, a page at a time (`next_offset` is
        null on the last page). Ties are broken by the other measure, then by player id.
        `by=rating` ranks the people with a rated game by their skill rating, settled ratings
        first, then provisional ones (each entry carries its rating, XP beside it). Whole or
        not at all: while part of the database is away (a worker of a Citus cluster), 503
        `database-unavailable` at once, as ranks count everyone."""
        ranked = await service.profiles.leaderboard(by, limit + 1, offset)
        return leaderboard_page(by, ranked, limit, offset)


ACCOUNT_CONTROLLERS = [AccountController, SessionController, ProfileController]
