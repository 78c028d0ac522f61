"""An event's bytes and hashes on the append path, pinned (issue 28: each event encoded once).

The digests below were computed by the store before events were encoded once (main at 1f64610:
``encode_event``'s bytes, parsed and encoded again sorted for the hash); the unit of work's
canonical bytes (`encode_canonical`) must give the very same hashes, and the same value to store
(jsonb keeps its own order of an object's members, so the row's text does not change:
tests/integration/test_event_store.py checks it on PostgreSQL)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from service.domain import chain
from service.domain.codec import canonical_event_type, encode_canonical, tag_of
from service.domain.ledger import WalletEventUnion
from service.domain.players import GameRecorded
from service.domain.rules.events import (
    EVENT_TYPES,
    BeeLanded,
    GameEvent,
    GameStarted,
    Pick,
    PickConfirmed,
    PicksRevealed,
    TurnStarted,
    encode_event,
)
from service.domain.table_events import (
    SeedContributed,
    TableEventUnion,
    TableOpened,
    encode_table_event,
)
from service.store.log import NewEvent, StreamAppend, hashes

KEY = chain.seal_key("g1", bytes(range(32)))
META = {"command_id": "c0ffee", "player_id": "p-ada"}
HEAD = b"\x07" * 32
GAME_EVENTS: list[msgspec.Struct] = [
    TurnStarted(turn=3, deadline=datetime(2031, 5, 1, 12, 0, 20, 123456, tzinfo=UTC)),
    PickConfirmed(seat=2, bee=47, by_clock="tapped"),
    PicksRevealed(turn=3, picks=(Pick(seat=2, bee=47), Pick(seat=1, bee=12))),
    BeeLanded(seat=1, bee=12, stem=3, taken=(5, 9, 30, 41, 66)),
]
SEED = SeedContributed(game_id="g1", player_id="p-ada", seed="ab" * 16)
CANONICAL = [
    b'{"deadline":"2031-05-01T12:00:20.123456Z","turn":3,"type":"turn_started"}',
    b'{"bee":47,"by_clock":"tapped","seat":2,"type":"pick_confirmed"}',
    b'{"picks":[{"bee":47,"seat":2},{"bee":12,"seat":1}],"turn":3,"type":"picks_revealed"}',
    b'{"bee":12,"seat":1,"stem":3,"taken":[5,9,30,41,66],"type":"bee_landed"}',
]
# v2 body digests: game-g1 versions 8-11, then table-t1 version 5 (the seed, sealed).
V2 = [
    "9c5203cd5c7053e75e73276d5af625785628e18f2173f078eff658a1aeabd540",
    "ef4a34de6e242ca4e2fb8c3db1c20b63b770a2c7db67f61fa9a0b3dd0494713b",
    "a4f656bc1901c576aef3d54b8341bc77cafd3ddd70621de8cb06dba7e86ad5a1",
    "f6253fc9ca21b511aa290994ffe2f963d46edce5ceb35f6f979cb9cffb7bd875",
    "fbb9adc39fd2504bb56daa546d7f7b5978f0db5e0e0b98138dd28750181d93b1",
]
# v1 chain hashes of the same four events as versions 1-4 of a stream.
V1 = [
    "e75442b9edba1360f0fd19acb907e7421f59fdad9354be6e443058a6e70e03e3",
    "645da8e832c12983b5da0983f787128342f813681b1579568f9e4344c27e2181",
    "0a7e1eec99e1fddffd931b756eb1c54bd449268b7f073117cc051803100b3be5",
    "6803a1a092168a4c1c38e2d44ddb16d3adc55b3a75512c708507353acb3bd821",
]


def _new(event: msgspec.Struct, once: bool) -> NewEvent:
    """As the unit of work writes it now (``once``), or as it did before."""
    tag = tag_of(event)
    if once:
        data, canonical = encode_canonical(event)
        return NewEvent(type=tag, data=data, canonical=canonical)
    if isinstance(event, SeedContributed):
        return NewEvent(type=tag, data=encode_table_event(event))
    assert isinstance(event, GameEvent)
    return NewEvent(type=tag, data=encode_event(event))


def test_the_canonical_bytes_are_canonical_json_of_what_was_stored_before() -> None:
    for event, pinned in zip(GAME_EVENTS, CANONICAL, strict=True):
        data, canonical = encode_canonical(event)
        assert isinstance(event, GameEvent)
        assert canonical and data == pinned
        assert data == chain.canonical_json(encode_event(event))
        assert json.loads(data) == json.loads(encode_event(event))


@pytest.mark.parametrize("once", [False, True], ids=["parsed", "encoded once"])
def test_the_v2_body_digests_are_the_pinned_ones(once: bool) -> None:
    game = StreamAppend(
        stream="game-g1",
        expected_version=7,
        events=[_new(e, once) for e in GAME_EVENTS],
        seal_keys={"g1": KEY},
    )
    table = StreamAppend(
        stream="table-t1", expected_version=4, events=[_new(SEED, once)], seal_keys={"g1": KEY}
    )
    heads = {"game-g1": (HEAD, chain.CHAIN_V2), "table-t1": (HEAD, chain.CHAIN_V2)}
    assert [h.hex() for h in hashes([game, table], heads, META)] == V2
    assert chain.body_digest(
        "game-g1", 9, "pick_confirmed", json.loads(CANONICAL[1]), META, {"g1": KEY}
    ) == bytes.fromhex(V2[1])


@pytest.mark.parametrize("once", [False, True], ids=["parsed", "encoded once"])
def test_the_v1_chain_hashes_are_the_pinned_ones(once: bool) -> None:
    old = StreamAppend(
        stream="wallet-p1", expected_version=0, events=[_new(e, once) for e in GAME_EVENTS]
    )
    heads = {"wallet-p1": (HEAD, chain.CHAIN_V1)}
    assert [h.hex() for h in hashes([old], heads, META)] == V1


def test_an_event_with_a_float_is_not_encoded_once() -> None:
    """jsonb and msgspec write some floats differently from ``canonical_json``: such events
    keep the codecs' bytes, and the store parses them for the hash as before."""
    assert not canonical_event_type(GameStarted)  # its clock settings are floats
    assert not canonical_event_type(TableOpened)


def test_every_stored_event_type_is_classified() -> None:
    """Every class the unit of work writes is either encoded once or has a reason not to be."""
    unions = [TableEventUnion, WalletEventUnion]
    classes: list[Any] = [*EVENT_TYPES, GameRecorded]
    for union in unions:
        info = msgspec.inspect.type_info(union)
        assert isinstance(info, msgspec.inspect.UnionType)
        classes += [t.cls for t in info.types if isinstance(t, msgspec.inspect.StructType)]
    refused = {cls.__name__ for cls in classes if not canonical_event_type(cls)}
    assert refused == {"GameStarted", "TableOpened"}  # floats: their clock settings


def test_a_set_or_a_float_field_is_not_plain() -> None:
    class WithSet(msgspec.Struct, tag_field="type", tag="with_set"):
        bees: frozenset[int]

    class WithFloat(msgspec.Struct, tag_field="type", tag="with_float"):
        seconds: float

    class Untagged(msgspec.Struct):
        bee: int

    class Plain(msgspec.Struct, tag_field="type", tag="plain"):
        bee: int
        at: datetime | None = None
        names: dict[str, list[str]] = {}

    assert not canonical_event_type(WithSet)
    assert not canonical_event_type(WithFloat)
    assert not canonical_event_type(Untagged)
    assert canonical_event_type(Plain)
    assert encode_canonical(WithSet(bees=frozenset({9, 1})))[1] is False
