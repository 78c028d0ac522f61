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

**Version 2** (``swarm/event/v2``, every stream created since migration 0015; docs/fairness.md
has it byte for byte): v1 hashes the data as it is, so a hash shown beside a redacted event
(another seat's pick, shown as ``bee: null``) let anyone try the 84 possible bees until one
matched. In v2 every value the rules hide (``HIDDEN``: each hand, a tapped or confirmed bee and
how the clock played it, a seed before its deal) and a game event's metadata enter the hash only
*sealed*: an HMAC-SHA256 under the game's seal key, which is derived from the game's secret server
seed and so published with it when the game ends, never before. The data with its hidden values
sealed, the metadata and the type are hashed into a ``body`` digest here; the link itself,
``SHA-256("swarm/event/v2" ‖ prev_hash ‖ body ‖ i64(recorded_at in µs))``, is computed by the
database as it stamps ``recorded_at`` (migration 0015's trigger), so the time is covered too.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import msgspec

from service.domain.fairness import encode, u32

DOMAIN_TAG = b"swarm/event/v1"
DOMAIN_TAG_V2 = b"swarm/event/v2"
BODY_TAG = b"swarm/event-body/v2"
SEAL_TAG = b"swarm/seal/v2"
SEAL_KEY_TAG = b"swarm/seal-key/v2"
CHAIN_V1, CHAIN_V2 = 1, 2
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

# What the rules hide, by stream kind and event type: the data fields sealed in v2 (a list
# field is sealed item by item: each hand on its own). A seed event names the game it seeds,
# whose key seals it; a game stream's events are sealed under their game's key, metadata too.
HIDDEN: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "game": {
        "game_started": ("hands",),
        "bee_tapped": ("bee",),
        "pick_confirmed": ("bee", "by_clock"),
    },
    "table": {
        "seed_contributed": ("seed",),
        "seed_revealed": ("seed",),
    },
}
ITEM_BY_ITEM = frozenset({"hands"})
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
    """One stored event as the chain sees it. ``chain`` is its stream's version of the chain;
    v2 also covers ``metadata`` and ``recorded_at``."""

    stream: str
    version: int
    type: str
    data: object  # the event data: JSON text (bytes or str), or the parsed JSON value
    hash: bytes
    chain: int = CHAIN_V1
    metadata: object = None  # the stored metadata object (v2)
    recorded_at: datetime | None = None  # the database's time stamp (v2)


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


# msgspec's encoder with sorted keys writes the same bytes as ``canonical_json`` for values
# without floats (strings, integers within 64 bits, booleans, nulls, arrays, objects with
# string keys: tests/unit/test_chain.py holds the two together), several times faster; every
# v2 event seals its metadata and hidden values through it (issue 28: the hashing was 9 % of a
# move's CPU).
_SORTED = msgspec.json.Encoder(order="sorted")
_INT64 = (-(2**63), 2**64)


def _plain(value: object) -> bool:
    """Whether ``value`` holds no float and no integer beyond 64 bits (the fast path's range)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return _INT64[0] <= value < _INT64[1]  # type: ignore[operator]
    if kind is list or kind is tuple:
        return all(_plain(item) for item in value)  # type: ignore[attr-defined]
    if kind is dict:
        return all(
            type(k) is str and _plain(v)
            for k, v in value.items()  # type: ignore[attr-defined]
        )
    return False


def canonical_value(value: object) -> bytes:
    """``canonical_json`` of a parsed JSON value (a string is a JSON string, not JSON text)."""
    if _plain(value):
        return _SORTED.encode(value)
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


class MissingSealKey(ValueError):
    """A v2 event hides a value of a game whose seal key was not given."""


def seal_key(game_id: str, server_seed: bytes) -> bytes:
    """The key that seals a game's hidden values: HMAC-SHA256 under its secret server seed, so it
    is as secret as the seed and becomes public with it when the game ends."""
    return hmac.digest(server_seed, encode(SEAL_KEY_TAG, game_id.encode("utf-8")), "sha256")


def _u32_field(part: bytes) -> bytes:
    """``encode``'s framing of one field: u32(len) ‖ bytes."""
    return len(part).to_bytes(4, "big") + part


_VERSION_LENGTH = (4).to_bytes(4, "big")  # every version field is a u32: 4 bytes long
_SEAL_TAG_FIELD = _u32_field(SEAL_TAG)


def seal(key: bytes, stream: str, version: int, path: str, value: object) -> str:
    """A hidden value's commitment (lowercase hex): HMAC-SHA256 under the game's seal key of the
    value's place (stream, version, path) and its canonical JSON. Without the key no guess of
    the value can be checked against it; with it (after the game) anyone can."""
    # encode(SEAL_TAG, stream, u32(version), path, canonical_value(value)), framed inline.
    message = b"".join(
        (
            _SEAL_TAG_FIELD,
            _u32_field(stream.encode("utf-8")),
            _VERSION_LENGTH,
            u32(version),
            _u32_field(path.encode("utf-8")),
            _u32_field(canonical_value(value)),
        )
    )
    return hmac.digest(key, message, "sha256").hex()


def _stream_kind(stream: str) -> tuple[str, str]:
    kind, _, ident = stream.partition("-")
    return kind, ident


def sealed(
    stream: str, version: int, data: Mapping[str, Any], keys: Mapping[str, bytes]
) -> dict[str, Any]:
    """``data`` with every value the rules hide replaced by its ``seal`` (``HIDDEN``)."""
    kind, ident = _stream_kind(stream)
    fields = HIDDEN.get(kind, {}).get(str(data.get("type")), ())
    out = dict(data)
    if not fields:
        return out
    game_id = ident if kind == "game" else str(data.get("game_id"))
    key = keys.get(game_id)
    if key is None:
        raise MissingSealKey(f"no seal key for game {game_id} ({stream} v{version})")
    for name in fields:
        if name not in data:
            continue
        value = data[name]
        if name in ITEM_BY_ITEM and isinstance(value, list | tuple):
            out[name] = [
                seal(key, stream, version, f"{name}/{i}", item) for i, item in enumerate(value)
            ]
        else:
            out[name] = seal(key, stream, version, name, value)
    return out


def covered_metadata(
    stream: str, version: int, metadata: object, keys: Mapping[str, bytes]
) -> object:
    """The metadata as v2 hashes it: sealed as a whole in a game stream (a move's metadata names
    it: its command id and digest would tell the bee), as it is in any other stream."""
    kind, ident = _stream_kind(stream)
    if kind != "game":
        return metadata if metadata is not None else {}
    key = keys.get(ident)
    if key is None:
        raise MissingSealKey(f"no seal key for game {ident} ({stream} v{version})")
    return seal(key, stream, version, "metadata", metadata if metadata is not None else {})


class Bodies:
    """``body_digest`` of successive events of one stream under one metadata (one append does
    this for each of its streams): what they share, the stream's encoding, the seals' framing
    and the metadata's canonical JSON, is worked out once instead of once an event (issue 28).
    The bytes hashed are exactly ``body_digest``'s, which is this class applied to one event
    (and ``sealed``'s and ``seal``'s for the hidden values: tests/unit/test_chain.py)."""

    def __init__(self, stream: str, metadata: object, keys: Mapping[str, bytes]) -> None:
        self.stream = stream
        self.keys = keys
        kind, self._ident = _stream_kind(stream)
        self._game = kind == "game"
        self._hidden = HIDDEN.get(kind, {})
        stream_field = _u32_field(stream.encode("utf-8"))
        self._body_prefix = _u32_field(BODY_TAG) + stream_field + _VERSION_LENGTH
        # Every seal in this stream: HMAC(key, encode(SEAL_TAG, stream, u32(version), path,
        # canonical(value))), all but the version, the path and the value the same.
        self._seal_prefix = _SEAL_TAG_FIELD + stream_field + _VERSION_LENGTH
        meta = metadata if metadata is not None else {}
        canonical_meta = canonical_value(meta)
        if self._game:
            self._seal_suffix = _u32_field(b"metadata") + _u32_field(canonical_meta)
        else:
            self._covered = _u32_field(canonical_meta)

    def hides(self, type: str) -> bool:
        """Whether an event whose data's ``type`` is ``type`` has values to seal here."""
        return type in self._hidden

    def digest(
        self,
        version: int,
        type: str,
        data: Mapping[str, Any],
        canonical: Callable[[Any], bytes] | None = None,
    ) -> bytes:
        """The body digest of the event at ``version``. ``canonical``: a faster encoder giving
        the same bytes as ``canonical_json`` for this data (the store's, for data without
        floats)."""
        encode = canonical or canonical_value
        hides = self._hidden.get(str(data.get("type")))
        if not hides:  # nothing to seal in most events (`sealed` would only copy them)
            return self.digest_canonical(version, type, encode(data))
        number = u32(version)
        covered = self._covered_at(number, version)
        body = encode(self._sealed(number, version, data, hides, encode))
        return self._digest(number, type, body, covered)

    def digest_canonical(self, version: int, type: str, body: bytes) -> bytes:
        """The body digest of the event at ``version`` whose data, with nothing to seal, has
        the canonical JSON ``body``."""
        number = u32(version)
        return self._digest(number, type, body, self._covered_at(number, version))

    def _digest(self, number: bytes, type: str, body: bytes, covered: bytes) -> bytes:
        return hashlib.sha256(
            self._body_prefix
            + number
            + _u32_field(type.encode("utf-8"))
            + _u32_field(body)
            + covered
        ).digest()

    def _covered_at(self, number: bytes, version: int) -> bytes:
        """``covered_metadata``'s canonical JSON, framed, for the event at ``version``."""
        if not self._game:
            return self._covered
        key = self.keys.get(self._ident)
        if key is None:
            raise MissingSealKey(f"no seal key for game {self._ident} ({self.stream} v{version})")
        message = self._seal_prefix + number + self._seal_suffix
        return _u32_field(_SORTED.encode(hmac.digest(key, message, "sha256").hex()))

    def _sealed(
        self,
        number: bytes,
        version: int,
        data: Mapping[str, Any],
        fields: tuple[str, ...],
        encode: Callable[[Any], bytes],
    ) -> dict[str, Any]:
        """``sealed(stream, version, data, keys)`` for data of a type that hides ``fields``;
        ``encode`` gives each hidden value's canonical JSON."""
        game_id = self._ident if self._game else str(data.get("game_id"))
        key = self.keys.get(game_id)
        if key is None:
            raise MissingSealKey(f"no seal key for game {game_id} ({self.stream} v{version})")
        prefix = self._seal_prefix + number
        out = dict(data)
        for name in fields:
            if name not in data:
                continue
            value = data[name]
            if name in ITEM_BY_ITEM and isinstance(value, list | tuple):
                out[name] = [
                    self._seal(key, prefix, f"{name}/{i}".encode(), encode(item))
                    for i, item in enumerate(value)
                ]
            else:
                out[name] = self._seal(key, prefix, name.encode("utf-8"), encode(value))
        return out

    @staticmethod
    def _seal(key: bytes, prefix: bytes, path: bytes, canonical: bytes) -> str:
        """``seal``: ``prefix`` frames the tag, the stream and the version."""
        message = prefix + _u32_field(path) + _u32_field(canonical)
        return hmac.digest(key, message, "sha256").hex()


def body_digest(
    stream: str,
    version: int,
    type: str,
    data: Mapping[str, Any],
    metadata: object,
    keys: Mapping[str, bytes],
    *,
    canonical: Callable[[Any], bytes] | None = None,
) -> bytes:
    """The v2 body of one event: SHA-256 over its place, type, sealed data and covered metadata
    (the database chains it: ``link_hash_v2``)::

        encode(BODY_TAG, stream, u32(version), type, canonical(sealed data),
               canonical(covered metadata))

    ``canonical``: a faster encoder giving the same bytes as ``canonical_json`` for this data
    (the store's, for data without floats). ``Bodies`` does many events of one stream."""
    return Bodies(stream, metadata, keys).digest(version, type, data, canonical)


def micros(moment: datetime) -> int:
    """A time stamp as whole microseconds since 1970-01-01 UTC (PostgreSQL's resolution)."""
    return (moment - EPOCH) // _MICROSECOND


def link_hash_v2(prev_hash: bytes, body: bytes, recorded_at: datetime) -> bytes:
    """A v2 event's hash: ``SHA-256("swarm/event/v2" ‖ prev_hash ‖ body ‖ i64(µs))``."""
    if len(prev_hash) != HASH_SIZE or len(body) != HASH_SIZE:
        raise ValueError("prev_hash and body must be 32 bytes")
    stamp = struct.pack(">q", micros(recorded_at))
    return hashlib.sha256(DOMAIN_TAG_V2 + prev_hash + body + stamp).digest()


def link_hash(prev_hash: bytes, link: ChainLink, keys: Mapping[str, bytes] | None = None) -> bytes:
    """The hash ``link`` should carry after ``prev_hash`` (``keys``: seal keys by game id)."""
    if link.chain == CHAIN_V1:
        return event_hash(
            prev_hash, link.stream, link.version, link.type, canonical_json(link.data)
        )
    if link.chain != CHAIN_V2:
        raise ValueError(f"unknown chain version {link.chain}")
    if link.recorded_at is None:
        raise ValueError("a v2 event needs its recorded_at")
    data = _parsed(link.data)
    if not isinstance(data, Mapping):
        raise ValueError("event data is not a JSON object")
    body = body_digest(link.stream, link.version, link.type, data, link.metadata, keys or {})
    return link_hash_v2(prev_hash, body, link.recorded_at)


def _parsed(data: object) -> object:
    if isinstance(data, bytes | bytearray | str):
        return json.loads(data, parse_constant=_reject_constant)
    return data


def verify_chain(
    events: Sequence[ChainLink],
    *,
    stream: str | None = None,
    anchors: Mapping[int, bytes] | None = None,
    after: tuple[int, bytes] = (0, GENESIS),
    seal_keys: Mapping[str, bytes] | None = None,
) -> ChainVerdict:
    """Check that ``events`` are versions 1..n of one stream, each hash chained to the previous.

    ``stream`` (default: the first event's) is the stream they must all belong to. ``anchors``
    maps versions to hashes known from outside the database; each must match, and the stream
    must reach the highest anchored version. ``after`` is the (version, hash) the events follow,
    for a slice of a stream: they are then versions ``version + 1 ..``, the first chained to
    ``hash``; an anchor before the slice cannot be checked and fails as "truncated".
    ``seal_keys`` (game id → ``seal_key``) open the hidden values of v2 events; every event of
    one stream must be of the same chain version (no downgrade to v1's open hashing), and v2
    time stamps never go back.
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

    last_time: datetime | None = None

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
        if link.chain != events[0].chain:
            mixed = f"chain v{link.chain} in a v{events[0].chain} stream"
            return fail(expected, "hash mismatch", mixed)
        if link.chain == CHAIN_V2 and link.recorded_at is not None:
            if last_time is not None and link.recorded_at < last_time:
                return fail(expected, "reordered", "recorded before the event before it")
            last_time = link.recorded_at
        try:
            recomputed = link_hash(head, link, seal_keys)
        except MissingSealKey as exc:
            return fail(expected, "hash mismatch", str(exc))
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
