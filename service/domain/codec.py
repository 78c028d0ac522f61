"""JSON for the tagged unions we store (game, table and wallet events): one reusable encoder
and typed decoder per union, as msgspec's performance notes advise."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec

T = TypeVar("T")

_encoder = msgspec.json.Encoder()


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
