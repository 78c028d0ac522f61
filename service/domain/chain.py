"""The hash chain of a stream: every event's hash covers the previous event's hash (pure, no I/O).

An event's hash is SHA-256 over these bytes, in this order (``‖`` is concatenation, ``u32`` and
``u64`` are unsigned big-endian integers)::

    b"swarm/event/v1"                                  14 ASCII bytes, the domain tag
    ‖ prev_hash                                        32 bytes: the hash of version - 1,
                                                       GENESIS (32 zero bytes) for version 1
    ‖ u32(len(stream_utf8)) ‖ stream_utf8              the stream name, UTF-8
    ‖ u64(version)                                     1, 2, 3, ... within the stream
    ‖ u32(len(type_utf8)) ‖ type_utf8                  the event type, UTF-8
    ‖ u32(len(data)) ‖ data                            canonical_json(event data)

``canonical_json`` parses the JSON and re-serialises it with Python's
``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``, UTF-8 encoded:
keys sorted, no whitespace, non-ASCII characters unescaped. So whitespace, key order and escape
style of the stored text do not matter, and an auditor holding the parsed JSON object gets the
same bytes. What is hashed is the data *as PostgreSQL stores it* (the ``jsonb`` value, read back
as text): the store normalises the caller's JSON through ``jsonb`` before hashing, because
``jsonb`` rewrites some numbers (``1e2`` is stored as ``100``).

Not covered by the hash: ``position``, ``metadata`` and ``recorded_at``.

``verify_chain`` recomputes a stream's chain and reports the first version where it breaks.
A chain alone cannot notice the *last* events being removed, nor a whole suffix being rewritten
with freshly computed hashes (the recipe is public): that needs hashes kept outside the database
(``anchors``, e.g. the head hash sent to players).
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

DOMAIN_TAG = b"swarm/event/v1"
GENESIS = bytes(32)
HASH_SIZE = 32

FailureReason = Literal[
    "hash mismatch",  # the stored hash is not the one recomputed from the previous event
    "version gap",  # an expected version is missing (e.g. a removed event)
    "reordered",  # versions out of order or repeated
    "stream mismatch",  # an event of another stream
    "missing hash",  # no hash stored (written before the chain existed) or not 32 bytes
    "anchor mismatch",  # the recomputed hash differs from one known from outside the database
    "truncated",  # the stream ends before a version known from outside the database
]


class ChainLink(msgspec.Struct, frozen=True):
    """One stored event as the chain sees it."""

    stream: str
    version: int
    type: str
    data: object  # the event data: JSON text (bytes or str), or the parsed JSON value
    hash: bytes


class ChainVerdict(msgspec.Struct, frozen=True):
    """The outcome of ``verify_chain``.

    ``verified`` events (versions ``1..verified``) recompute correctly; ``head`` is the hash of the
    last of them (``GENESIS`` if none). On failure, ``failed_version`` is the first version that
    does not verify (the missing one, for a gap) and ``reason``/``detail`` say why.
    """

    ok: bool
    verified: int
    head: bytes
    failed_version: int | None = None
    reason: FailureReason | None = None
    detail: str = ""


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def canonical_json(data: bytes | str | object) -> bytes:
    """The canonical bytes of a JSON value given as JSON text (bytes or str) or as parsed value.

    >>> canonical_json(b'{ "b": 1, "a": [2.50, "x"] }')
    b'{"a":[2.5,"x"],"b":1}'
    """
    value = (
        json.loads(data, parse_constant=_reject_constant)
        if isinstance(data, bytes | bytearray | str)
        else data
    )
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def _field(value: bytes) -> bytes:
    return struct.pack(">I", len(value)) + value


def event_hash(prev_hash: bytes, stream: str, version: int, type: str, data: bytes) -> bytes:
    """SHA-256 of one event (layout in the module docstring); ``data`` is ``canonical_json``."""
    if len(prev_hash) != HASH_SIZE:
        raise ValueError(f"prev_hash must be {HASH_SIZE} bytes, not {len(prev_hash)}")
    if version < 1:
        raise ValueError(f"version must be >= 1, not {version}")
    digest = hashlib.sha256(DOMAIN_TAG)
    digest.update(prev_hash)
    digest.update(_field(stream.encode("utf-8")))
    digest.update(struct.pack(">Q", version))
    digest.update(_field(type.encode("utf-8")))
    digest.update(_field(data))
    return digest.digest()


def link_hash(prev_hash: bytes, link: ChainLink) -> bytes:
    """The hash ``link`` should carry after ``prev_hash``."""
    return event_hash(prev_hash, link.stream, link.version, link.type, canonical_json(link.data))


def verify_chain(
    events: Sequence[ChainLink],
    *,
    stream: str | None = None,
    anchors: Mapping[int, bytes] | None = None,
    after: tuple[int, bytes] = (0, GENESIS),
) -> ChainVerdict:
    """Check that ``events`` are versions 1..n of one stream, each hash chained to the previous.

    ``stream`` (default: the first event's) is the stream they must all belong to. ``anchors``
    maps versions to hashes known from outside the database; each must match, and the stream
    must reach the highest anchored version. ``after`` is the (version, hash) the events follow,
    for a slice of a stream: they are then versions ``version + 1 ..``, the first chained to
    ``hash``; an anchor before the slice cannot be checked and fails as "truncated".
    """
    anchors = anchors or {}
    name = stream if stream is not None else (events[0].stream if events else "")
    start, head = after
    verified = start
    if len(head) != HASH_SIZE:
        return ChainVerdict(False, start, head, start + 1, "missing hash", "bad previous hash")
    if anchors and min(anchors) <= start:
        return ChainVerdict(
            False, start, head, min(anchors), "truncated", f"the events start after {start}"
        )

    def fail(version: int, reason: FailureReason, detail: str) -> ChainVerdict:
        return ChainVerdict(False, verified, head, version, reason, detail)

    for index, link in enumerate(events, start=start):
        expected = index + 1
        if link.version != expected:
            later = events[index - start :]
            if link.version < expected or any(e.version == expected for e in later):
                return fail(expected, "reordered", f"found version {link.version} at {expected}")
            return fail(expected, "version gap", f"version {expected} missing")
        if link.stream != name:
            return fail(expected, "stream mismatch", f"event of stream {link.stream!r}")
        if len(link.hash) != HASH_SIZE:
            return fail(expected, "missing hash", f"stored hash has {len(link.hash)} bytes")
        try:
            recomputed = link_hash(head, link)
        except ValueError as exc:  # data that is not JSON cannot have been stored by the store
            return fail(expected, "hash mismatch", f"data is not canonical JSON: {exc}")
        if recomputed != link.hash:
            return fail(
                expected,
                "hash mismatch",
                f"stored {link.hash.hex()}, recomputed {recomputed.hex()}",
            )
        anchored = anchors.get(expected)
        if anchored is not None and anchored != recomputed:
            return fail(
                expected, "anchor mismatch", f"anchor {anchored.hex()}, chain {recomputed.hex()}"
            )
        head = recomputed
        verified = expected
    if anchors and max(anchors) > verified:
        return fail(
            verified + 1, "truncated", f"stream ends at {verified}, anchored {max(anchors)}"
        )
    return ChainVerdict(True, verified, head)
