"""Who a request comes from, for the limits, and the guards every input passes before it is
decoded (issue 13).

* **The client address** is the connection's peer, unless that peer is one of the trusted
  proxies (the `forwarded_allow_ips` setting, `SWARM_FORWARDED_ALLOW_IPS`: addresses or
  networks, `*` for any; `127.0.0.1` by default): then `X-Forwarded-For` is read from the
  right, skipping trusted hops, and the first address that is not a trusted proxy is the
  client. A header from anyone else is ignored, so a client cannot choose its own address.
  uvicorn (`swarm serve`) applies the same setting to the peer first; applying it again here
  changes nothing then, and keeps the rule when the app is served another way.
* **The rate-limit identity** is the player behind a valid bearer token (`player:<id>`, looked
  up and remembered for `IDENTITY_TTL` seconds in a bounded cache, by the token's SHA-256); a
  missing, unknown, expired or revoked token counts against the client address
  (`addr:<address>`), so made-up tokens share one budget instead of each getting its own, and
  are remembered apart in a small cache of their own (memory stays flat under a flood).
* **The counters** live in `SweptMemoryStore`: expired windows are swept as it fills, and it
  never holds more than `MAX_KEYS` keys.
* **Input guards** (`input_guard`): a JSON body is refused with 400 before any decoder sees it
  when it nests deeper than `MAX_DEPTH`, or holds a NUL or a lone surrogate (raw or escaped);
  a query string the same for NUL and malformed UTF-8.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import os
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any
from urllib.parse import unquote_to_bytes

import msgspec
from litestar import Request
from litestar.enums import ScopeType
from litestar.middleware.rate_limit import CacheObject, RateLimitMiddleware
from litestar.stores.memory import MemoryStore
from litestar.types import ASGIApp, Message, Receive, ReceiveMessage, Scope, Send

MAX_DEPTH = 32  # arrays and objects inside each other; a move is 1 deep
# Paths the rate limit does not count (service/api/app.py); every other answer carries the
# RateLimit-* headers (declared so in the document).
NOT_RATE_LIMITED = [
    "/health",
    "/metrics",
    r"/games/[^/]+/stream$",  # the streams themselves, not their ticket operations
    r"/tables/[^/]+/stream$",
    "/docs",
]


class RateLimitHeaders(RateLimitMiddleware):
    """Litestar's rate limit, with `RateLimit-Reset` never negative: Litestar computes it when
    the answer is sent from the window read when the request came, so an answer that took
    longer than the rest of the window (a registration's password hash) said `-3`."""

    def create_response_headers(self, cache_object: CacheObject) -> dict[str, str]:
        headers = super().create_response_headers(cache_object)
        key = self.config.rate_limit_reset_header_key
        headers[key] = str(max(0, int(headers[key])))
        return headers


MAX_KEYS = 100_000  # rate-limit keys held at once, per instance
IDENTITY_TTL = 10.0  # seconds a token's player is remembered for the rate limit
MAX_IDENTITIES = 10_000  # valid tokens' players remembered at once
MAX_UNKNOWN = 1_000  # tokens found not valid remembered at once (no lookup while they last)
_STATE_KEY = "swarm_rate_limit_identity"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


ANY: tuple[Network, ...] = (ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0"))


@functools.cache
def trusted_proxies(setting: str) -> tuple[Network, ...]:
    """`forwarded_allow_ips` parsed: addresses or networks, comma-separated; `*`: any."""
    parts = [part.strip() for part in setting.split(",") if part.strip()]
    if "*" in parts:
        return ANY
    return tuple(ipaddress.ip_network(part, strict=False) for part in parts)


def _is_trusted(address: str, proxies: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in proxies)


def client_address(
    scope: Scope | Request[Any, Any, Any], proxies: tuple[Network, ...] | None = None
) -> str:
    """The client's address (see the module docstring)."""
    if isinstance(scope, Request):
        scope = scope.scope
    if proxies is None:
        proxies = trusted_proxies(_setting(scope))
    client = scope.get("client")
    peer = client[0] if client else "unknown"
    if not proxies or not _is_trusted(peer, proxies):
        return peer
    forwarded = [
        value.decode("latin-1") for name, value in scope["headers"] if name == b"x-forwarded-for"
    ]
    hops = [hop.strip() for line in forwarded for hop in line.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _is_trusted(hop, proxies):
            return hop
    return hops[0] if hops else peer


def _setting(scope: Scope) -> str:
    """The app's `forwarded_allow_ips` (service/settings.py), else its variable's value."""
    app = scope.get("litestar_app") or scope.get("app")
    allowed = getattr(
        getattr(getattr(app, "state", None), "settings", None), "forwarded_allow_ips", None
    )
    if isinstance(allowed, str):
        return allowed
    return os.environ.get("SWARM_FORWARDED_ALLOW_IPS", "127.0.0.1")


# --- the rate-limit identity -------------------------------------------------------------------


class Identities:
    """Token → player id, for `IDENTITY_TTL` seconds, each kept by its SHA-256 (32 bytes, not
    the token's text, which a client may make as long as a header allows). Valid tokens: at
    most `MAX_IDENTITIES`; tokens found not valid apart, at most `MAX_UNKNOWN`, so a flood of
    made-up tokens costs a bounded few kilobytes and never evicts a real player's entry (least
    recently used dropped first in each)."""

    def __init__(self, lookup: Callable[[str], Awaitable[str | None]]) -> None:
        self.lookup = lookup
        self._known: OrderedDict[bytes, tuple[float, str]] = OrderedDict()
        self._unknown: OrderedDict[bytes, float] = OrderedDict()

    async def player_of(self, token: str) -> str | None:
        now = time.monotonic()
        key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        cached = self._known.get(key)
        if cached is not None and cached[0] > now:
            self._known.move_to_end(key)
            return cached[1]
        refused = self._unknown.get(key)
        if refused is not None and refused > now:
            self._unknown.move_to_end(key)
            return None
        player_id = await self.lookup(token)
        if player_id is None:
            self._known.pop(key, None)
            _remember(self._unknown, key, now + IDENTITY_TTL, MAX_UNKNOWN)
        else:
            self._unknown.pop(key, None)
            _remember(self._known, key, (now + IDENTITY_TTL, player_id), MAX_IDENTITIES)
        return player_id


def _remember(cache: OrderedDict[bytes, Any], key: bytes, value: Any, most: int) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > most:
        cache.popitem(last=False)


def bearer_token(request: Request[Any, Any, Any]) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


async def resolve_identity(request: Request[Any, Any, Any]) -> bool:
    """`RateLimitConfig.check_throttle_handler`: finds who the request is from (asynchronously,
    which the identifier callback cannot) and keeps it on the request; always limits."""
    identity = "addr:" + client_address(request)
    token = bearer_token(request)
    if token is not None:
        identities: Identities | None = getattr(request.app.state, "identities", None)
        if identities is None:
            service = getattr(request.app.state, "service", None)
            if service is not None:
                identities = request.app.state.identities = Identities(_lookup(service))
        player_id = await identities.player_of(token) if identities is not None else None
        if player_id is not None:
            identity = "player:" + player_id
    request.scope[_STATE_KEY] = identity  # type: ignore[literal-required]
    return True


def rate_limit_identity(request: Request[Any, Any, Any]) -> str:
    """`RateLimitConfig.identifier_for_request`: what `resolve_identity` found."""
    identity = request.scope.get(_STATE_KEY)
    return identity if isinstance(identity, str) else "addr:" + client_address(request)


def _lookup(service: Any) -> Callable[[str], Awaitable[str | None]]:
    from service.usecases.errors import Unauthorized

    async def lookup(token: str) -> str | None:
        try:
            player = await service.identity.authenticate(token)
        except Unauthorized:
            return None
        player_id: str = player.player_id
        return player_id

    return lookup


class SweptMemoryStore(MemoryStore):
    """Litestar's memory store, bounded: when it holds `max_keys` keys, expired ones are swept,
    and if that is not enough the oldest are dropped (their windows start afresh)."""

    def __init__(self, max_keys: int = MAX_KEYS) -> None:
        super().__init__()
        self.max_keys = max_keys

    async def set(
        self, key: str, value: str | bytes, expires_in: int | timedelta | None = None
    ) -> None:
        if key not in self._store and len(self._store) >= self.max_keys:
            await self.delete_expired()
            while len(self._store) >= self.max_keys:
                del self._store[next(iter(self._store))]
        await super().set(key, value, expires_in)


# --- input guards --------------------------------------------------------------------------------

_OPEN, _CLOSE, _QUOTE, _BACKSLASH = b"[{", b"]}", 0x22, 0x5C


def json_problem(body: bytes, max_depth: int = MAX_DEPTH) -> str | None:
    """Why a JSON body must be refused before decoding, or None. Strings are scanned for NUL
    and lone surrogates, raw or as `\\u` escapes; nesting is counted outside strings."""
    if b"\x00" in body:
        return "NUL characters are not accepted."
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "The body is not UTF-8."
    if b"\\u" not in body and body.count(b"[") + body.count(b"{") <= max_depth:
        # No escape to check, and too few brackets to nest past the limit (a move has one):
        # nothing the byte-by-byte scan below could find (issue 28: it ran on every request).
        return None
    depth, i, n, in_string = 0, 0, len(body), False
    while i < n:
        byte = body[i]
        if in_string:
            if byte == _QUOTE:
                in_string = False
            elif byte == _BACKSLASH:
                if body[i + 1 : i + 2] == b"u":
                    problem, i = _escape(body, i)
                    if problem is not None:
                        return problem
                    continue
                i += 1
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            if depth > max_depth:
                return f"JSON nested deeper than {max_depth} levels is not accepted."
        elif byte in _CLOSE:
            depth -= 1
        i += 1
    return None


def _code_unit(body: bytes, i: int) -> int | None:
    """The `\\uXXXX` escape at `i` as a number, or None when it is not one."""
    digits = body[i + 2 : i + 6]
    if body[i : i + 2] != b"\\u" or len(digits) != 4:
        return None
    try:
        return int(digits, 16)
    except ValueError:
        return None


def _escape(body: bytes, i: int) -> tuple[str | None, int]:
    unit = _code_unit(body, i)
    if unit is None:
        return None, i + 2  # malformed: the decoder refuses it
    if unit == 0:
        return "NUL characters are not accepted.", i
    if 0xD800 <= unit <= 0xDBFF:
        low = _code_unit(body, i + 6)
        if low is None or not 0xDC00 <= low <= 0xDFFF:
            return "Lone surrogates are not accepted.", i
        return None, i + 12
    if 0xDC00 <= unit <= 0xDFFF:
        return "Lone surrogates are not accepted.", i
    return None, i + 6


def query_problem(query: bytes) -> str | None:
    raw = unquote_to_bytes(query.replace(b"+", b" "))
    if b"\x00" in raw:
        return "NUL characters are not accepted."
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "The query string is not UTF-8."
    return None


def _bad_request(detail: str) -> tuple[Message, Message]:
    body = msgspec.json.encode(
        {
            "type": "urn:swarm:problem:bad-request",
            "title": "The request is malformed",  # problems.TITLES (not imported: a cycle)
            "status": 400,
            "detail": detail,
            "code": "bad-request",
            "retryable": False,  # problems.CATALOGUE (not imported: a cycle)
            "doc_url": "/docs/errors#bad-request",  # problems.doc_url
        }
    )
    start: Message = {
        "type": "http.response.start",
        "status": 400,
        "headers": [
            (b"content-type", b"application/problem+json"),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    return start, {"type": "http.response.body", "body": body, "more_body": False}


def input_guard(app: ASGIApp) -> ASGIApp:
    """Refuses, with 400 `bad-request`, a request whose query string or JSON body fails the
    guards above. The body (already bounded by the app's body limit) is read whole, checked,
    and handed on unchanged."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        problem = query_problem(scope.get("query_string", b""))
        if problem is None and scope["method"] in ("POST", "PUT", "PATCH", "DELETE"):
            chunks: list[bytes] = []
            messages: list[ReceiveMessage] = []
            more = True
            while more:
                message = await receive()
                messages.append(message)
                if message["type"] != "http.request":
                    break
                chunks.append(message.get("body", b""))
                more = message.get("more_body", False)
                if sum(map(len, chunks)) > _BODY_LIMIT:  # the app answers 413 for it
                    break
            body = b"".join(chunks)
            if len(body) <= _BODY_LIMIT:
                problem = json_problem(body)
            replay = iter(messages)

            async def replayed() -> ReceiveMessage:
                return next(replay, None) or await receive()

            if problem is None:
                await app(scope, replayed, send)
                return
        elif problem is None:
            await app(scope, receive, send)
            return
        for answer in _bad_request(problem):
            await send(answer)

    return middleware


_BODY_LIMIT = 16 * 1024
