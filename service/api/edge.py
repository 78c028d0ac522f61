"""The ASGI layer around the whole Litestar app, unknown paths included.

In order, for every HTTP request:

1. **Request id and version**: the client's `X-Request-ID` (64 characters at most) or a new
   one, bound to every log line of the request and echoed on every response (404s for unknown
   paths too), with `API-Version` (the contract's version); a 401 without `WWW-Authenticate`
   or a 429 or 503 without `Retry-After` gets one.
2. **One access log line** (JSON, through structlog) when the response ends: method, path,
   operation, status, duration, request id. Never headers, query values or bodies.
3. **The body first**: a body declared larger than the limit is refused at once (413, and the
   connection closed in stages, service/serve.py), unread; any other request with a body is
   read whole (up to the body limit) before it counts as work in flight; a body that does not
   arrive within `body_timeout` gets 408 and the connection closed. So half-open requests
   (headers sent, body never) hold a socket, not a slot: they cannot make real players' moves
   wait or fail (issue 13).
4. **Admission** (service/api/admission.py): at most `max_in_flight` requests at once (fewer
   while the event loop runs late), a short queue shed by its delay, moves first; a request
   refused there gets 503 `overloaded` with `Retry-After` before any work is done for it.
   At most `max_streams` streams at once (more are refused at once); a stream, once open, is
   never shed. A player's games in bulk (an answer as long as their history) is admitted the
   same way, outside the in-flight limit, at most `max_exports` at once. A stream or an export
   whose client takes none of its bytes for `send_timeout` is dropped, its connection aborted:
   a client that stops reading holds nothing for long (issue 43's review).
5. **Draining**: on shutdown (`begin_shutdown()`, called on SIGTERM/SIGINT) every open stream
   is ended with `retry: 1000`, so its client reconnects (to another instance, with
   `Last-Event-ID`) and loses nothing; requests in flight finish normally.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

import msgspec
import structlog
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from service import __version__, metrics
from service.api import admission
from service.api.problems import doc_url, retryable, title_of

log = structlog.get_logger("service.access")

# The last message of a stream ended by a shutdown: an SSE comment and a reconnection delay.
DRAIN_MESSAGE = b": the server is restarting; reconnect with Last-Event-ID\nretry: 1000\n\n"

# Every answer says which contract it speaks (the document's info.version).
_API_VERSION = (b"api-version", __version__.encode("ascii"))
_NO_STORE = (b"cache-control", b"no-store")
# What every answer with these statuses must carry, whoever made it: how to authenticate, when
# to come back. Added here when the answer's maker left it out.
_MUST_SAY = {
    401: (b"www-authenticate", b"Bearer"),
    429: (b"retry-after", b"1"),
    503: (b"retry-after", b"1"),
}


def _missing(status: int, headers: Any) -> list[tuple[bytes, bytes]]:
    name, value = _MUST_SAY[status]
    return [] if any(k.lower() == name for k, _ in headers) else [(name, value)]


def _problem(status: int, code: str, detail: str) -> bytes:
    return msgspec.json.encode(
        {
            "type": f"urn:swarm:problem:{code}",
            "title": title_of(code),
            "status": status,
            "detail": detail,
            "code": code,
            "retryable": retryable(code),
            "doc_url": doc_url(code),
        }
    )


_OVERLOADED = _problem(503, "overloaded", "Too much work in flight; try again shortly.")
_INTERNAL = _problem(500, "internal-error", "This is a bug.")
_TOO_LARGE = _problem(
    413,
    "body-too-large",
    "The body is larger than the limit; no valid request comes near it.",
)
_BODY_TIMEOUT = _problem(408, "request-timeout", "The request body did not arrive in time.")

# Requests shed past capacity are logged as one line at most this often (`Edge._log_shed`).
SHED_LOG_EVERY = 1.0

_PID = os.getpid()  # which worker served it, when there are several
_edges: weakref.WeakSet[Edge] = weakref.WeakSet()  # every app of this process


def drain_on_signals(loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Make SIGTERM and SIGINT end this process's streams at once, then go on to the server's
    own handler (uvicorn's: stop accepting, wait for requests in flight, lifespan shutdown).

    Without this, uvicorn waits for every connection to close before the lifespan shutdown,
    and a stream never closes by itself: the process hung until SIGKILL. Done from the lifespan
    so it holds however uvicorn was started (`swarm serve`, workers, the uvicorn CLI). Returns
    a function restoring the previous handlers. Only the main thread can set handlers; test
    servers in a thread are stopped another way.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous: dict[int, Any] = {
        sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)
    }

    def handler(sig: int, frame: FrameType | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is already closed: nothing to end
            loop.call_soon_threadsafe(begin_shutdown)
        server_handler = previous[sig]
        if callable(server_handler):
            server_handler(sig, frame)
            # uvicorn re-raises the signal after a graceful exit, so the process "dies of"
            # it: SIGINT then becomes a KeyboardInterrupt traceback, and SIGTERM skips the
            # atexit hook that stops the embedded PostgreSQL. The exit was clean: say so.
            captured = getattr(getattr(server_handler, "__self__", None), "_captured_signals", None)
            if isinstance(captured, list) and sig in captured:
                captured.remove(sig)

    for sig in previous:
        signal.signal(sig, handler)

    def restore() -> None:
        for sig, old in previous.items():
            if signal.getsignal(sig) is handler:
                signal.signal(sig, old)

    return restore


def begin_shutdown() -> None:
    """End every open stream of every app in this process (called from the event loop)."""
    for edge in list(_edges):
        edge.draining.set()


class SendStalled(Exception):
    """The client took no bytes of an answer for `send_timeout` seconds: it is dropped."""


class Edge:
    def __init__(
        self,
        app: ASGIApp,
        *,
        max_in_flight: int,
        max_loop_lag: float = admission.LAG_TARGET,
        max_streams: int,
        max_body_bytes: int,
        body_timeout: float,
        max_exports: int = 4,
        send_timeout: float = 30.0,
        record_metrics: bool = True,
    ) -> None:
        self.app = app
        self.record_metrics = record_metrics
        self.max_in_flight = max_in_flight
        self.max_streams = max_streams
        self.max_exports = max_exports
        self.send_timeout = send_timeout
        self.exports = 0
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.admission = admission.Admission(max_in_flight, max_lag=max_loop_lag)
        self.loop_watch = admission.LoopWatch(self.admission) if max_loop_lag > 0 else None
        self._shed_since_logged: Counter[int] = Counter()
        self._shed_logged = time.monotonic()
        self.streams = 0
        self.draining = asyncio.Event()
        _edges.add(self)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope["headers"])
        request_id = (
            headers.get(b"x-request-id", b"").decode("latin-1")[:64] or os.urandom(16).hex()
        )
        structlog.contextvars.bind_contextvars(request_id=request_id)
        status = 500
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                status = message["status"]
                response_started = True
                extra = [(b"x-request-id", request_id.encode("latin-1")), _API_VERSION]
                sent = message.get("headers", [])
                if not any(name.lower() == b"cache-control" for name, _ in sent):
                    # Answers are per caller and current (a view holds the caller's hand, some
                    # answers a token): no browser or shared cache may keep one. The board's
                    # files set their own (`no-cache`).
                    extra.append(_NO_STORE)
                if status in _MUST_SAY:
                    extra += _missing(status, message.get("headers", []))
                if status == 413:
                    # The rest of the body is not read: the server closes in stages after
                    # the answer (service/serve.py), so the client still reads it.
                    extra.append((b"connection", b"close"))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        shed: int | None = None
        try:
            shed = await self._admit(scope, headers, receive, send_with_id)
        except Exception:
            log.exception("request failed outside the app")
            if not response_started:
                await _respond(
                    send_with_id,
                    500,
                    _problem(500, "internal-error", "Something went wrong."),
                )
        finally:
            route = scope.get("route_handler")
            operation = getattr(route, "operation_id", None) if route is not None else None
            if operation == "submitMove" and 200 <= status < 300:
                metrics.MOVES.inc()
            elif status == 429:
                metrics.RATE_LIMITED.inc()
            duration = time.perf_counter() - started
            if self.record_metrics and route is not None:
                _record(scope, route, operation, status, duration)
            if shed is not None:
                self._shed_since_logged[shed] += 1
            else:
                log.info(
                    "request",
                    method=scope["method"],
                    path=scope["path"],
                    operation=operation if isinstance(operation, str) else None,
                    status=status,
                    duration_ms=round(duration * 1000, 2),
                    pid=_PID,
                )
            if self._shed_since_logged and time.monotonic() - self._shed_logged >= SHED_LOG_EVERY:
                self._log_shed()
            structlog.contextvars.unbind_contextvars("request_id")

    def _log_shed(self) -> None:
        """One line for the requests shed since the last such line (by kind), instead of an
        access line each: past capacity they come by the thousand, and each line cost as much
        as the refusal itself (issue 28). `swarm_admission_shed_total` counts them too."""
        now = time.monotonic()
        log.warning(
            "shed",
            requests={admission.KINDS[k]: n for k, n in sorted(self._shed_since_logged.items())},
            seconds=round(now - self._shed_logged, 1),
            status=503,
            pid=_PID,
        )
        self._shed_since_logged.clear()
        self._shed_logged = now

    async def _admit(
        self, scope: Any, headers: dict[bytes, bytes], receive: Receive, send: Send
    ) -> int | None:
        """Serve the request, or refuse it; the kind of request it shed (None: not shed)."""
        if _declared_length(headers) > self.max_body_bytes:
            await _respond(send, 413, _TOO_LARGE, close=True)  # at once: nothing is read
            return None
        if b"content-length" in headers or b"transfer-encoding" in headers:
            try:
                received = await self._read_body(receive)
            except TimeoutError:
                metrics.SLOW_CLIENTS.inc()
                await _respond(send, 408, _BODY_TIMEOUT, close=True)
                return None
            receive = _replay(received, receive)
        long_answer = admission.long_answer(scope["method"], scope["path"])
        if long_answer == admission.STREAM:
            if self.streams >= self.max_streams:
                metrics.OVERLOADED.inc()
                await _respond(send, 503, _OVERLOADED, retry_after="1")
                return None
            self.streams += 1
            metrics.OPEN_STREAMS.inc()
            try:
                await self._read_by_client(scope, self._stream, receive, send)
            finally:
                self.streams -= 1
                metrics.OPEN_STREAMS.dec()
            return None
        if long_answer == admission.EXPORT:
            if self.exports >= self.max_exports:
                metrics.OVERLOADED.inc()
                await _respond(send, 503, _OVERLOADED, retry_after="5")
                return None
            self.exports += 1
            try:
                await self._read_by_client(scope, self.app, receive, send)
            finally:
                self.exports -= 1
            return None
        kind = admission.kind_of(scope["method"], scope["path"])
        if kind is None:
            await self.app(scope, receive, send)
            return None
        if self.loop_watch is not None:
            self.loop_watch.seen()
        if not await self.admission.enter(kind):
            metrics.OVERLOADED.inc()
            metrics.SHED.labels(admission.KINDS[kind]).inc()
            retry_after = self.admission.refused(kind)
            await _respond(send, 503, _OVERLOADED, retry_after=str(retry_after))
            return kind
        metrics.HTTP_IN_PROGRESS.inc()
        try:
            await self.app(scope, receive, send)
        finally:
            metrics.HTTP_IN_PROGRESS.dec()
            self.admission.leave()
        return None

    async def _read_by_client(self, scope: Any, app: ASGIApp, receive: Receive, send: Send) -> None:
        """Serve an answer that lasts as long as its client keeps reading (a stream, an
        export), dropping the client once a message has waited `send_timeout` for it to take
        any bytes: uvicorn's `send` waits while the socket's buffers are full, and a client
        that never reads would otherwise hold its place, and the work behind it, for ever.
        The connection is aborted (`swarm.abort`, service/serve.py), so its buffered bytes
        are dropped too; the app's later messages go nowhere."""
        stalled = False

        async def bounded_send(message: Message) -> None:
            nonlocal stalled
            if stalled:
                raise SendStalled
            try:
                async with asyncio.timeout(self.send_timeout):
                    await send(message)
            except TimeoutError:
                stalled = True
                metrics.SLOW_READERS.inc()
                log.warning("slow reader dropped", path=scope["path"], seconds=self.send_timeout)
                abort = scope.get("swarm.abort")
                if callable(abort):
                    abort()
                raise SendStalled from None

        try:
            await app(scope, receive, bounded_send)
        except Exception:
            if not stalled:
                raise  # the app's own failure: reported as any other

    async def _read_body(self, receive: Receive) -> list[Any]:
        """The request's messages up to the end of its body (or just past the body limit, so
        the app answers 413 as usual), within `body_timeout`."""
        messages: list[Any] = []
        size = 0
        async with asyncio.timeout(self.body_timeout):
            while True:
                message = await receive()
                messages.append(message)
                if message["type"] != "http.request":
                    return messages  # the client went away: the app sees it as usual
                size += len(message.get("body", b""))
                if size > self.max_body_bytes or not message.get("more_body", False):
                    return messages

    async def _stream(self, scope: Any, receive: Receive, send: Send) -> None:
        """Run a stream so a shutdown can end it cleanly: the last message says when to
        reconnect, and the app sees the client as gone (which stops its generator)."""
        lock = asyncio.Lock()
        state = {"started": False, "ended": False, "ok": False}

        async def finish() -> None:
            # Under the lock: never in the middle of another message.
            if state["started"] and state["ok"] and not state["ended"]:
                state["ended"] = True
                with contextlib.suppress(OSError):
                    await send(
                        {"type": "http.response.body", "body": DRAIN_MESSAGE, "more_body": False}
                    )

        async def guarded_send(message: Message) -> None:
            async with lock:
                if state["ended"]:
                    return  # ended for the shutdown: the app's late messages go nowhere
                if message["type"] == "http.response.start":
                    state["started"] = True
                    state["ok"] = message["status"] == 200
                elif message["type"] == "http.response.body" and not message.get("more_body"):
                    state["ended"] = True
                await send(message)
                if self.draining.is_set() and message["type"] == "http.response.body":
                    await finish()

        async def guarded_receive() -> Any:
            if self.draining.is_set():
                async with lock:
                    await finish()
                return {"type": "http.disconnect"}
            incoming = asyncio.ensure_future(receive())
            drained = asyncio.ensure_future(self.draining.wait())
            try:
                done, _ = await asyncio.wait(
                    {incoming, drained}, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                drained.cancel()
            if incoming in done:
                return incoming.result()
            incoming.cancel()
            async with lock:
                await finish()
            return {"type": "http.disconnect"}

        await self.app(scope, guarded_receive, guarded_send)


# Paths whose requests are not timed by operation: operators' own, and the docs' files.
_UNTIMED = ("/metrics", "/health", "/docs", "/static")


def _record(scope: Any, route: Any, operation: Any, status: int, duration: float) -> None:
    """A routed request's count, error and latency by operation (streams and `_UNTIMED` apart):
    the labels Litestar's Prometheus middleware gave them."""
    template = scope.get("path_template") or scope["path"]
    if template.startswith(_UNTIMED) or template.endswith("/stream"):
        return
    labels = (
        scope["method"],
        template,
        status,
        "swarm",
        operation if isinstance(operation, str) else route.handler_name,
    )
    children = _children.get(labels)
    if children is None:
        if len(_children) >= _MAX_CHILDREN:  # bounded: templates and statuses are few
            _children.clear()
        children = _children[labels] = (
            metrics.HTTP_REQUESTS.labels(*labels),
            metrics.HTTP_DURATION.labels(*labels),
        )
    children[0].inc()
    children[1].observe(duration)
    if status >= 500:
        metrics.HTTP_ERRORS.labels(*labels).inc()


# Each label set's counter and histogram, looked up once: prometheus_client's `labels()` takes
# a lock and checks every label on each call (issue 28: a few microseconds a request).
_children: dict[tuple[Any, ...], tuple[Any, Any]] = {}
_MAX_CHILDREN = 10_000


def _declared_length(headers: dict[bytes, bytes]) -> int:
    """The body's declared `Content-Length` (0 when there is none; the HTTP parser has already
    refused a malformed one)."""
    try:
        return int(headers.get(b"content-length", b"0"))
    except ValueError:
        return 0


def _replay(messages: list[Any], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Any:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


async def _respond(
    send: Send, status: int, body: bytes, *, retry_after: str | None = None, close: bool = False
) -> None:
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if retry_after is not None:
        headers.append((b"retry-after", retry_after.encode()))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
