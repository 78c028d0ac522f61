"""The event log's vocabulary, shared by every store (`service.store.port.EventLog`): what is
appended (`NewEvent`, `StreamAppend`), what is read (`RecordedEvent`, `LogCursor`), why an append
is refused (`AppendRefused` and its kinds), and how each new event is hashed (`hashes`, chain v1
and v2, from the data as ``jsonb`` stores it).

The PostgreSQL store (`events.py`) and the in-memory one (`memory.py`) both build on this module,
side by side, and neither imports the other (after pyeventsourcing's ``persistence.py``, which
``postgres.py`` and ``popo.py`` implement). Nothing here knows a driver: the PostgreSQL store
translates asyncpg's errors into these at its edge.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

import msgspec

from service.domain import chain


class NewEvent(msgspec.Struct, frozen=True):
    type: str
    data: bytes  # the event's JSON, already encoded by the caller (msgspec.json.encode)
    # ``data`` is already ``chain.canonical_json`` of the value jsonb stores for it, an object
    # whose ``type`` member is ``type`` (``codec.encode_canonical`` says when): its chain hash
    # is computed from these bytes as they are, not from a parse and a second encoding.
    canonical: bool = False


class StreamAppend(msgspec.Struct, frozen=True):
    stream: str
    expected_version: int  # version the stream must be at now; 0 = the stream must not exist yet
    events: Sequence[NewEvent]
    # The seal keys (`chain.seal_key`, by game id) of the games whose hidden values these events
    # hold: a game stream's own, and the games a table's seed events seed (chain v2).
    seal_keys: Mapping[str, bytes] = {}


class LogCursor(msgspec.Struct, frozen=True, order=True):
    """Where a reader of the whole log is: the last event read, in ``read_all`` order."""

    txid: int = 0
    position: int = 0
    # On Citus, where each worker numbers its own transactions: for each shard, in the order
    # of their hash ranges, the (writer, txid, position) read so far of each worker that wrote
    # rows there (one, unless the shard was moved); () elsewhere. It only grows, so each cursor
    # is greater than the one before (but across a move to a worker of a lower group id).
    shards: tuple[tuple[tuple[int, int, int], ...], ...] = ()


class RecordedEvent(msgspec.Struct, frozen=True):
    position: int
    stream: str
    version: int
    type: str
    data: bytes  # raw JSON bytes as stored (jsonb::text, so normalised by PostgreSQL)
    metadata: dict[str, Any]
    recorded_at: datetime
    hash: bytes = (
        b""  # the chain hash (service/domain/chain.py); empty for rows older than the chain
    )
    txid: int = 0  # the writing transaction; filled in by read_all only
    chain: int = 1  # the chain version its stream is hashed under (migration 0015)
    # On Citus, the reader's place in every shard once this event is read (read_all only).
    after: LogCursor | None = None

    @property
    def cursor(self) -> LogCursor:
        return self.after or LogCursor(self.txid, self.position)


class AppendRefused(Exception):
    """The log refused an append; nothing was written. Every store raises these (the PostgreSQL
    store translates its driver's errors into them), never a driver's own."""


class ConcurrencyConflict(AppendRefused):
    """The stream was not at the expected version (someone else appended first)."""

    def __init__(self, stream: str, expected_version: int, actual_version: int) -> None:
        super().__init__(
            f"stream {stream!r} is at version {actual_version}, expected {expected_version}"
        )
        self.stream = stream
        self.expected_version = expected_version
        self.actual_version = actual_version


class GuardRefused(AppendRefused):
    """The append's ``guard`` (a `TokenGuard`) refused it; nothing was written."""


class DuplicateCommand(AppendRefused):
    """This command id was already processed for the stream; nothing was written."""

    def __init__(self, stream: str, command_id: str, version: int) -> None:
        super().__init__(
            f"command {command_id!r} on stream {stream!r} was already processed (version {version})"
        )
        self.stream = stream
        self.command_id = command_id
        self.version = version


class UniqueViolation(AppendRefused):
    """A row committed with the events (``also=``) would break the unique constraint
    ``constraint``; nothing was written. Callers tell their cases apart by the constraint's name
    (an account's name taken, say) without knowing the driver."""

    def __init__(self, constraint: str) -> None:
        super().__init__(f"unique constraint {constraint!r} refused the write")
        self.constraint = constraint


# --- hashing: what each new event's hash column gets ----------------------------------------


def _jsonb_number(text: str) -> int | float:
    """A JSON number with a fraction or an exponent, read as ``jsonb`` stores it (``numeric``:
    plain notation, the scale kept, no sign on zero), then as Python reads that text."""
    value = Decimal(text)
    if value.is_zero():
        value = abs(value)
    plain = format(value, "f")
    return float(plain) if "." in plain else int(plain)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


class _HasFloat(Exception):
    """A number with a fraction or an exponent: ``jsonb`` rewrites it, so the slow path."""


def _has_float(raw: str) -> object:
    raise _HasFloat


# The fast path: msgspec's decoder and sorted encoder give the same bytes as
# ``chain.canonical_json`` (``json.dumps(sort_keys=True, separators=(",", ":"),
# ensure_ascii=False)``) for objects of strings, integers, booleans, nulls, arrays and objects
# (tests/integration/test_event_store.py compares the two); a float sends the text to the slow
# path, which reads numbers the way ``jsonb`` stores them.
_FAST_DECODER = msgspec.json.Decoder(float_hook=_has_float)
_SORTED_ENCODER = msgspec.json.Encoder(order="sorted")


def stored_value(text: str) -> tuple[Any, bool]:
    """The JSON value ``jsonb`` will store for ``text``, and whether it holds no float (then
    msgspec's sorted encoder gives ``chain.canonical_json``'s bytes, faster, with no walk of the
    value to find that out)."""
    try:
        return _FAST_DECODER.decode(text), True
    except (_HasFloat, msgspec.DecodeError):
        pass
    return json.loads(text, parse_float=_jsonb_number, parse_constant=_reject_constant), False


def stored_canonical(text: str) -> bytes:
    """``chain.canonical_json`` of the text ``jsonb`` will store for ``text``, without asking
    PostgreSQL (tests/integration/test_event_store.py checks tricky numbers against it)."""
    value, plain = stored_value(text)
    return _SORTED_ENCODER.encode(value) if plain else chain.canonical_value(value)


def _v2_body(bodies: chain.Bodies, version: int, type_: str, text: str) -> bytes:
    """The v2 body digest of one new event (``chain.body_digest``), from its data as ``jsonb``
    will store it."""
    value, plain = stored_value(text)
    if not isinstance(value, dict):
        raise ValueError("event data must be a JSON object")
    return bodies.digest(
        version, type_, value, _SORTED_ENCODER.encode if plain else chain.canonical_value
    )


def hashes(
    appends: Sequence[StreamAppend],
    heads: Mapping[str, tuple[bytes | None, int]],
    metadata: Mapping[str, Any],
    texts: Sequence[str] | None = None,
) -> list[bytes]:
    """What each new event's hash column gets: under v2 its body digest (the database
    chains it as it stamps the time, migration 0015); under v1 its chain hash, continuing
    its stream's head (``GENESIS`` for a head stored without a hash, before migration 0003:
    such a stream fails verification anyway, "missing hash"). ``texts``: every event's data
    decoded, in order, when the caller has them. An event whose data is canonical
    (``NewEvent.canonical``) and hides nothing is hashed from its bytes as they are."""
    digests: list[bytes] = []
    n = 0
    for a in appends:
        prev, scheme = heads[a.stream]
        bodies = chain.Bodies(a.stream, metadata, a.seal_keys) if scheme == chain.CHAIN_V2 else None
        for i, event in enumerate(a.events, start=a.expected_version + 1):
            text = texts[n] if texts is not None else event.data.decode("utf-8")
            n += 1
            try:
                if bodies is not None:
                    if event.canonical and not bodies.hides(event.type):
                        digests.append(bodies.digest_canonical(i, event.type, event.data))
                    else:
                        digests.append(_v2_body(bodies, i, event.type, text))
                    continue
                canonical = event.data if event.canonical else stored_canonical(text)
            except chain.MissingSealKey:
                raise
            except ValueError as exc:
                raise ValueError(f"event data is not valid JSON: {exc}") from exc
            prev = chain.event_hash(prev or chain.GENESIS, a.stream, i, event.type, canonical)
            digests.append(prev)
    return digests


def link(event: RecordedEvent) -> chain.ChainLink:
    """A stored event as the hash chain sees it."""
    return chain.ChainLink(
        event.stream,
        event.version,
        event.type,
        event.data,
        event.hash,
        chain=event.chain,
        metadata=event.metadata,
        recorded_at=event.recorded_at,
    )
