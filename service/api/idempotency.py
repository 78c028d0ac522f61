"""`Idempotency-Key` on every POST that creates something or spends an allowance: every POST of
the API but submitMove, whose `move_id` is its own key (Stripe's semantics; docs/errors.md,
"Retrying safely").

* The same key with the same request (method, path, query and body, as JSON: key order and
  spacing do not matter) within 24 hours gets the first answer again, status and body, with
  `Idempotent-Replayed: true`; nothing runs a second time (no second table, no second guest,
  no allowance spent twice).
* The same key with another request: 409 `idempotency-key-reused` (409, as `move-id-reused`
  is: the request is well formed and would be taken with a new key; the API answers 422 only
  for what can never be valid).
* While the first request with a key has not answered: 409 `idempotency-key-in-use`, with
  `Retry-After`.
* Only a success (2xx) is kept: after a refusal or an error the key may be sent again, and the
  request runs again.
* Keys are the caller's own: scoped to its bearer token, or to its address when it sends none
  (createGuest, register without a guest token, login).
* An answer this layer gives itself (a replay, `idempotency-key-reused`, `-in-use`) goes to a
  token-scoped caller only while its token is valid: a revoked or expired token gets 401, as
  the operation would give it, never the stored answer (which may hold the caller's hand, a
  ticket or a token).

Nothing stored is readable without the client's key: from the key and the caller's scope,
HKDF-SHA256 derives a MAC key and an encryption key; the record's lookup and the request's
fingerprint are HMACs under the first, and the answer (which may hold a bearer token:
createGuest, register, login) is sealed with AES-256-GCM under the second. A database reader
sees random bytes, and cannot tell which caller, operation or body a row belongs to.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from litestar.enums import ScopeType
from litestar.handlers import HTTPRouteHandler
from litestar.types import ASGIApp, Message, Receive, ReceiveMessage, Scope, Send

from service.api.limits import client_address
from service.api.problems import problem_messages
from service.store.idempotency import IdempotencyRecords
from service.usecases.errors import Unauthorized
from service.usecases.identity import TOKEN_REFUSED

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
# How long a key's answer is kept, and after how long a request that never answered (its
# process died) no longer holds its key.
TTL = timedelta(hours=24)
STALE_AFTER = timedelta(seconds=60)
# The app state's attributes this layer reads (set in the lifespan, service/api/app.py).
RECORDS = "idempotency_records"
CLOCK = "idempotency_clock"
# A handler whose `opt` has this takes no Idempotency-Key (it has a key of its own).
OWN_KEY = "own_idempotency_key"

# 16 to 255 visible ASCII characters: a UUID (36) is a good key. The lower bound keeps keys
# from being guessed, since a key is all it takes to read its stored answer.
KEY_PATTERN = "^[\\x21-\\x7e]{16,255}$"
_KEY = re.compile(r"[\x21-\x7e]{16,255}")
# Headers of an answer that are part of it (the others are the edge's, per response).
_KEPT_HEADERS = {b"content-type", b"cache-control", b"location"}
_INFO = b"swarm/idempotency/v1"


class _Answer(msgspec.Struct, array_like=True):
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


class Keys:
    """What one client key derives, for one caller."""

    def __init__(self, key: str, caller: str) -> None:
        derived = HKDF(
            algorithm=SHA256(),
            length=64,
            salt=hashlib.sha256(caller.encode()).digest(),
            info=_INFO,
        ).derive(key.encode("ascii"))
        self._mac, self._seal = derived[:32], derived[32:]
        self.lookup = self._hmac(b"lookup")

    def _hmac(self, *parts: bytes) -> bytes:
        return hmac.new(self._mac, b"\0".join(parts), hashlib.sha256).digest()

    def fingerprint(self, method: str, path: str, query: bytes, body: bytes) -> bytes:
        return self._hmac(b"request", method.encode(), path.encode(), query, canonical(body))

    def seal(self, answer: _Answer) -> bytes:
        nonce = os.urandom(12)
        return nonce + AESGCM(self._seal).encrypt(
            nonce, msgspec.msgpack.encode(answer), self.lookup
        )

    def open(self, sealed: bytes) -> _Answer | None:
        try:
            plain = AESGCM(self._seal).decrypt(sealed[:12], sealed[12:], self.lookup)
        except InvalidTag:
            return None
        return msgspec.msgpack.decode(plain, type=_Answer)


def canonical(body: bytes) -> bytes:
    """A JSON body with its keys sorted and no spacing (the raw bytes if it is not JSON)."""
    if not body.strip():
        return b""
    try:
        return msgspec.json.encode(msgspec.json.decode(body), order="sorted")
    except msgspec.DecodeError:
        return body


def _bearer(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            if kind.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def caller_of(scope: Scope) -> str:
    """Whose keys these are: the bearer token's (its hash), else the client address's."""
    token = _bearer(scope)
    if token is not None:
        return "token:" + hashlib.sha256(token.encode()).hexdigest()
    return "address:" + client_address(scope)


async def _token_refused(scope: Scope) -> bool:
    """Whether the caller sent a bearer token, to an operation that takes one, that is not (or
    no longer) valid: such a caller is nobody, and gets none of the answers this layer keeps
    for the token's owner. (createGuest and login take no token: one sent along only scopes
    the key, as the operation ignores it.)"""
    token = _bearer(scope)
    handler = scope.get("route_handler")
    if token is None or not isinstance(handler, HTTPRouteHandler):
        return False
    if not any("bearer" in requirement for requirement in handler.resolve_security()):
        return False
    try:
        await scope["app"].state.service.identity.authenticate(token)
    except Unauthorized:
        return True
    return False


def _needs_token(scope: Scope) -> bool:
    """The operation takes only callers with a bearer token (no anonymous alternative)."""
    handler = scope.get("route_handler")
    if not isinstance(handler, HTTPRouteHandler):
        return False
    security = handler.resolve_security()
    return bool(security) and all(requirement for requirement in security)


def takes_key(scope: Scope) -> bool:
    handler = scope.get("route_handler")
    return (
        scope["type"] == ScopeType.HTTP
        and scope["method"] == "POST"
        and handler is not None
        and not handler.opt.get(OWN_KEY)
    )


def _problem(status: int, code: str, detail: str, *extra: tuple[bytes, bytes]) -> list[Message]:
    return problem_messages(status, code, detail, list(extra))


BAD_KEY = (
    "bad-request",
    f"{HEADER} must be one key of 16 to 255 visible ASCII characters (a UUID is a good key).",
)
REUSED = (
    "idempotency-key-reused",
    f"This {HEADER} was already used, within 24 hours, with another method, path or body; "
    "send each new request with a new key.",
)
REFUSED = ("unauthorized", TOKEN_REFUSED)
IN_USE = (
    "idempotency-key-in-use",
    "The first request with this key has not answered yet; retry after `Retry-After` seconds.",
)


def idempotency(app: ASGIApp) -> ASGIApp:
    """The layer (a Litestar middleware): see the module docstring."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        key = _header(scope) if takes_key(scope) else None
        if key is None or (_bearer(scope) is None and _needs_token(scope)):
            # No key, or nobody to scope it to: an operation that needs a token answers 401
            # itself (a key scoped to the address would answer 409 before it).
            await app(scope, receive, send)
            return
        if not _KEY.fullmatch(key):
            for message in _problem(400, *BAD_KEY):
                await send(message)
            return
        state = scope["app"].state
        records: IdempotencyRecords = getattr(state, RECORDS)
        clock: Callable[[], datetime] = getattr(state, CLOCK)
        body, replay = await _read_body(receive)
        keys = Keys(key, caller_of(scope))
        fingerprint = keys.fingerprint("POST", scope["path"], scope.get("query_string", b""), body)
        claim = await records.claim(
            keys.lookup, fingerprint, clock(), ttl=TTL, stale_after=STALE_AFTER
        )
        if claim.state != "new" and await _token_refused(scope):
            for message in _problem(401, *REFUSED, (b"www-authenticate", b"Bearer")):
                await send(message)
            return
        if not hmac.compare_digest(claim.fingerprint, fingerprint):
            for message in _problem(409, *REUSED):
                await send(message)
            return
        if claim.state == "running":
            for message in _problem(409, *IN_USE, (b"retry-after", b"1")):
                await send(message)
            return
        if claim.state == "done":
            answer = keys.open(claim.answer or b"")
            if answer is None:  # sealed under another key: not this request's
                for message in _problem(409, *REUSED):
                    await send(message)
            else:
                await _send_replay(answer, send)
            return
        await _run(app, scope, replay, send, records, keys)

    return middleware


def _header(scope: Scope) -> str | None:
    """The request's key; several (two headers) come back as the empty string, which no key
    matches: a 400, where the first was taken and a retry with the other would have done the
    request again."""
    keys = [value for name, value in scope["headers"] if name == b"idempotency-key"]
    if not keys:
        return None
    if len(keys) > 1:
        return ""
    return keys[0].decode("latin-1")


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The whole body (the edge has bounded it), and a `receive` that hands it on."""
    messages: list[ReceiveMessage] = []
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    pending = iter(messages)

    async def replayed() -> ReceiveMessage:
        return next(pending, None) or await receive()

    return b"".join(chunks), replayed


async def _send_replay(answer: _Answer, send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": answer.status,
            "headers": [
                *answer.headers,
                (b"content-length", str(len(answer.body)).encode()),
                (REPLAYED.lower().encode(), b"true"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": answer.body, "more_body": False})


async def _run(
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    records: IdempotencyRecords,
    keys: Keys,
) -> None:
    """Run the request, keeping its answer if it succeeded; otherwise free the key."""
    started: dict[str, Any] = {}
    chunks: list[bytes] = []
    kept = False

    async def capture(message: Message) -> None:
        nonlocal kept
        if message["type"] == "http.response.start":
            started.update(message)
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            status = started.get("status", 500)
            if not message.get("more_body", False) and 200 <= status < 300:
                headers = [
                    (k, v) for k, v in started.get("headers", ()) if k.lower() in _KEPT_HEADERS
                ]
                answer = _Answer(status=status, headers=headers, body=b"".join(chunks))
                await records.complete(keys.lookup, keys.seal(answer))
                kept = True
        await send(message)

    try:
        await app(scope, receive, capture)
    finally:
        if not kept:
            await records.release(keys.lookup)
