"""JSON for the tagged unions we store (game, table and wallet events): one reusable encoder
and typed decoder per union, as msgspec's performance notes advise.

`encode_canonical` writes an event once to the bytes both its stored row and its chain hash
use (issue 28): for an event whose declared fields cannot hold a float (nor a set, nor any
other value whose text ``jsonb`` or ``chain.canonical_json`` would write differently),
msgspec's sorted encoder writes exactly ``chain.canonical_json`` of the value ``jsonb`` stores,
so the store hashes the bytes it sends instead of parsing them and encoding them again. The
stored row does not change: ``jsonb`` keeps an object's members in its own order, whatever
the order sent (tests/integration/test_event_store.py and tests/unit/test_event_bytes.py)."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec
import msgspec.inspect as mi

T = TypeVar("T")

_encoder = msgspec.json.Encoder()
_sorted = msgspec.json.Encoder(order="sorted")


class TaggedCodec(Generic[T]):
    def __init__(self, union: Any) -> None:
        self._decoder: msgspec.json.Decoder[T] = msgspec.json.Decoder(union)

    def encode(self, event: msgspec.Struct) -> bytes:
        return _encoder.encode(event)

    def decode(self, data: bytes | str) -> T:
        return self._decoder.decode(data)


def tag_of(event: msgspec.Struct) -> str:
    """The `type` tag an event is stored under."""
    tag = type(event).__struct_config__.tag
    assert isinstance(tag, str)
    return tag


# Declared types whose JSON is the same text from msgspec's sorted encoder as from
# ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` of the value jsonb
# gives back: strings, integers (any size: digits), booleans, null, and the times msgspec writes
# as strings. Not floats (jsonb rewrites ``1e2`` as ``100``; msgspec and json.dumps write
# ``1e-07`` differently), sets (the sorted encoder sorts them, the plain one does not: the row
# would change), bytes, enums, decimals or anything untyped.
_SCALARS = (mi.StrType, mi.IntType, mi.BoolType, mi.NoneType, mi.DateTimeType, mi.DateType)
_canonical_types: dict[type, bool] = {}


def _plain_type(t: mi.Type, seen: frozenset[type]) -> bool:
    if isinstance(t, _SCALARS):
        return True
    if isinstance(t, mi.LiteralType):
        return all(type(v) is str or type(v) is int for v in t.values)
    if isinstance(t, mi.ListType | mi.VarTupleType):
        return _plain_type(t.item_type, seen)
    if isinstance(t, mi.TupleType):
        return all(_plain_type(item, seen) for item in t.item_types)
    if isinstance(t, mi.DictType):
        return isinstance(t.key_type, mi.StrType) and _plain_type(t.value_type, seen)
    if isinstance(t, mi.UnionType):
        return all(_plain_type(member, seen) for member in t.types)
    if isinstance(t, mi.StructType):
        return t.cls in seen or all(_plain_type(f.type, seen | {t.cls}) for f in t.fields)
    return False


def canonical_event_type(cls: type[msgspec.Struct]) -> bool:
    """Whether `encode_canonical` writes events of ``cls`` as canonical JSON: a struct tagged in
    its ``type`` member (what chain v2 reads to know what it hides), every declared field of a
    plain type. Worked out once a class."""
    known = _canonical_types.get(cls)
    if known is None:
        info = mi.type_info(cls)
        known = (
            isinstance(info, mi.StructType)
            and info.tag_field == "type"
            and isinstance(info.tag, str)
            and not info.array_like
            and _plain_type(info, frozenset())
        )
        _canonical_types[cls] = known
    return known


def encode_canonical(event: msgspec.Struct) -> tuple[bytes, bool]:
    """The bytes to store ``event`` as, and whether they are its canonical JSON (then its chain
    hash is computed from them as they are). Any other event is encoded as `TaggedCodec` does."""
    if canonical_event_type(type(event)):
        return _sorted.encode(event), True
    return _encoder.encode(event), False
