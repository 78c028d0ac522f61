"""The hash chain of a stream (service/domain/chain.py): layout, canonical JSON, and what
verification catches."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import struct
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.domain import chain, fairness
from service.domain.chain import (
    GENESIS,
    ChainLink,
    canonical_json,
    canonical_value,
    event_hash,
    link_hash,
    seal_key,
    verify_chain,
)

# Known answer, pinned: changing the layout (or canonical JSON) changes this and breaks every
# stored chain. A new layout needs a new domain tag (swarm/event/v2), not an edit.
KAT_DATA = '{"seat": 1, "card": "Bée"}'
KAT_CANONICAL = '{"card":"Bée","seat":1}'.encode()
KAT_HASH_1 = "78ee2b6451394c8c54ca89cb259d653a6bb32f1a3fecf9192a8195485d2163da"
KAT_HASH_2 = "35832c486e7696f41fb2a446327099deeab65e9fd1301c3cbff2d9e702965ffe"


def test_event_hash_known_answer() -> None:
    assert canonical_json(KAT_DATA) == KAT_CANONICAL
    first = event_hash(GENESIS, "game-1", 1, "game_started", KAT_CANONICAL)
    assert first.hex() == KAT_HASH_1
    second = event_hash(first, "game-1", 2, "turn_started", canonical_json({"seat": 0}))
    assert second.hex() == KAT_HASH_2


def test_event_hash_layout_is_the_documented_one() -> None:
    def u32(n: int) -> bytes:
        return n.to_bytes(4, "big")

    message = (
        b"swarm/event/v1"
        + bytes(32)
        + u32(6)
        + b"game-1"
        + (1).to_bytes(8, "big")
        + u32(12)
        + b"game_started"
        + u32(len(KAT_CANONICAL))
        + KAT_CANONICAL
    )
    assert hashlib.sha256(message).hexdigest() == KAT_HASH_1


def test_length_prefixes_keep_fields_apart() -> None:
    data = canonical_json({})
    assert event_hash(GENESIS, "ab", 1, "c", data) != event_hash(GENESIS, "a", 1, "bc", data)


def test_event_hash_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError, match="prev_hash"):
        event_hash(b"short", "s", 1, "t", b"{}")
    with pytest.raises(ValueError, match="version"):
        event_hash(GENESIS, "s", 0, "t", b"{}")


@pytest.mark.parametrize(
    "text",
    [
        '{"b":[1,2,{"d":null,"c":true}],"a":"é ✓","n":-2.5,"big":9007199254740993}',
        '{ "a" : "\\u00e9 \\u2713", "big": 9007199254740993,\n "n": -2.50,'
        ' "b": [1, 2, {"c": true, "d": null}] }',
        '{"n":-25e-1,"a":"é ✓","big":9007199254740993,"b":[1,2,{"c":true,"d":null}]}',
    ],
)
def test_canonical_json_ignores_key_order_whitespace_and_escapes(text: str) -> None:
    expected = '{"a":"é ✓","b":[1,2,{"c":true,"d":null}],"big":9007199254740993,"n":-2.5}'
    assert canonical_json(text) == expected.encode("utf-8")
    assert canonical_json(text.encode("utf-8")) == expected.encode("utf-8")
    assert canonical_json(json.loads(text)) == expected.encode("utf-8")


@pytest.mark.parametrize("text", ["{not json", '{"x": NaN}', '{"x": Infinity}', "[1e400]"])
def test_canonical_json_refuses_what_is_not_json(text: str) -> None:
    with pytest.raises(ValueError):
        canonical_json(text)


def chain_of(stream: str, *events: tuple[str, object]) -> list[ChainLink]:
    links: list[ChainLink] = []
    head = GENESIS
    for version, (type_, data) in enumerate(events, start=1):
        text = json.dumps(data).encode()
        head = event_hash(head, stream, version, type_, canonical_json(text))
        links.append(ChainLink(stream, version, type_, text, head))
    return links


GAME = chain_of(
    "game-a",
    ("game_started", {"seats": 2}),
    ("turn_started", {"seat": 0}),
    ("bee_tapped", {"seat": 0, "bee": 3}),
    ("turn_started", {"seat": 1}),
    ("game_ended", {"winner": 1}),
)


def relink(link: ChainLink, **changes: object) -> ChainLink:
    return msgspec.structs.replace(link, **changes)


def failure(
    links: Sequence[ChainLink],
    *,
    stream: str | None = None,
    anchors: dict[int, bytes] | None = None,
) -> tuple[int | None, str | None]:
    verdict = verify_chain(links, stream=stream, anchors=anchors)
    assert not verdict.ok
    assert verdict.verified == (verdict.failed_version or 1) - 1
    return verdict.failed_version, verdict.reason


def test_an_intact_chain_verifies() -> None:
    verdict = verify_chain(GAME)
    assert verdict.ok
    assert (verdict.verified, verdict.head) == (5, GAME[-1].hash)
    assert verdict.failed_version is None and verdict.reason is None
    empty = verify_chain([], stream="game-a")
    assert empty.ok and (empty.verified, empty.head) == (0, GENESIS)


def test_parsed_and_reformatted_data_verify_alike() -> None:
    parsed = [json.loads(e.data) for e in GAME if isinstance(e.data, bytes)]
    as_objects = [relink(e, data=p) for e, p in zip(GAME, parsed, strict=True)]
    as_other_text = [
        relink(e, data=json.dumps(p, indent=1)) for e, p in zip(GAME, parsed, strict=True)
    ]
    assert verify_chain(as_objects).ok
    assert verify_chain(as_other_text).ok


def test_edited_data_fails_at_that_event() -> None:
    tampered = list(GAME)
    tampered[2] = relink(GAME[2], data=b'{"seat": 0, "bee": 4}')
    assert failure(tampered) == (3, "hash mismatch")


def test_edited_type_fails_at_that_event() -> None:
    tampered = list(GAME)
    tampered[1] = relink(GAME[1], type="turn_skipped")
    assert failure(tampered) == (2, "hash mismatch")


def test_a_removed_event_fails_at_its_version() -> None:
    assert failure(GAME[:1] + GAME[2:]) == (2, "version gap")


def test_a_removed_and_renumbered_event_fails_at_its_version() -> None:
    # Full database access: delete version 2 and renumber the rest to close the gap.
    renumbered = [GAME[0]] + [relink(e, version=e.version - 1) for e in GAME[2:]]
    assert failure(renumbered) == (2, "hash mismatch")


def test_two_swapped_events_fail_at_the_first() -> None:
    assert failure([GAME[0], GAME[2], GAME[1], *GAME[3:]]) == (2, "reordered")
    # ... and with their versions swapped too, as an UPDATE could do.
    swapped = [GAME[0], relink(GAME[2], version=2), relink(GAME[1], version=3), *GAME[3:]]
    assert failure(swapped) == (2, "hash mismatch")


def test_a_repeated_event_fails() -> None:
    assert failure([*GAME[:3], GAME[2], *GAME[3:]]) == (4, "reordered")


def test_a_changed_hash_fails_at_that_event() -> None:
    tampered = list(GAME)
    tampered[3] = relink(GAME[3], hash=bytes(32))
    assert failure(tampered) == (4, "hash mismatch")
    tampered[3] = relink(GAME[3], hash=b"")
    assert failure(tampered) == (4, "missing hash")


def test_a_rewritten_event_breaks_the_next_link() -> None:
    # Edit data and fix that event's hash: the next event no longer chains to it.
    tampered = list(GAME)
    edited = relink(GAME[2], data=b'{"seat": 0, "bee": 4}')
    tampered[2] = relink(edited, hash=link_hash(GAME[1].hash, edited))
    assert failure(tampered) == (4, "hash mismatch")


def test_an_event_moved_from_another_stream_fails() -> None:
    other = chain_of("game-b", ("game_started", {"seats": 2}), ("turn_started", {"seat": 0}))
    tampered = list(GAME)
    tampered[1] = other[1]
    assert failure(tampered) == (2, "stream mismatch")
    # Relabelled as this stream: its hash was computed for the other one.
    tampered[1] = relink(other[1], stream="game-a")
    assert failure(tampered) == (2, "hash mismatch")
    # Even as the first event, given the stream that is being verified.
    assert failure([other[0], *GAME[1:]], stream="game-a") == (1, "stream mismatch")


def test_anchors_catch_a_removed_tail_and_a_recomputed_chain() -> None:
    anchors = {5: GAME[4].hash}
    assert verify_chain(GAME, anchors=anchors).ok
    # The chain alone cannot see the last event removed; an anchor kept elsewhere can.
    assert verify_chain(GAME[:4]).ok
    assert failure(GAME[:4], anchors=anchors) == (5, "truncated")
    # Rewriting from version 3 on with recomputed hashes passes the chain but not the anchor.
    forged = chain_of(
        "game-a",
        ("game_started", {"seats": 2}),
        ("turn_started", {"seat": 0}),
        ("bee_tapped", {"seat": 0, "bee": 4}),
        ("turn_started", {"seat": 1}),
        ("game_ended", {"winner": 1}),
    )
    assert verify_chain(forged).ok
    assert failure(forged, anchors=anchors) == (5, "anchor mismatch")
    assert failure(forged, anchors={3: GAME[2].hash}) == (3, "anchor mismatch")


# --- the vectors of docs/fairness.md ----------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "fairness.md"


def _doc_blocks(first_key: str) -> list[dict[str, str]]:
    """The doc's ```text blocks whose first line is `first_key: …`, as key → value."""
    blocks = re.findall(r"```text\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return [
        dict(line.split(": ", 1) for line in block.strip().splitlines())
        for block in blocks
        if block.startswith(f"{first_key}: ")
    ]


CHAIN_VECTORS = _doc_blocks("chain_vector")
JSON_VECTORS = _doc_blocks("json_vector")


def test_the_doc_has_its_chain_vectors() -> None:
    names = [v["chain_vector"] for v in CHAIN_VECTORS]
    assert names == ["game-1", "game-2", "game-3", "table-4", "table-5"]
    assert len(JSON_VECTORS) == 1


@pytest.mark.parametrize("v", CHAIN_VECTORS, ids=lambda v: v["chain_vector"])
def test_chain_vector(v: dict[str, str]) -> None:
    data = bytes.fromhex(v["data_hex"])
    assert canonical_json(data) == data  # the data bytes are already canonical
    prev = bytes.fromhex(v["prev_hash"])
    digest = event_hash(prev, v["stream"], int(v["version"]), v["type"], data)
    assert digest.hex() == v["hash"]
    assert hashlib.sha256(bytes.fromhex(v["preimage"])).hexdigest() == v["hash"]
    assert json.loads(data)["type"] == v["type"]  # data carries its own type
    tag = b"swarm/event/v1"
    assert bytes.fromhex(v["preimage"]).startswith(tag + prev)  # the tag has no length prefix


def _vector_links(vectors: list[dict[str, str]]) -> list[ChainLink]:
    return [
        ChainLink(
            stream=v["stream"],
            version=int(v["version"]),
            type=v["type"],
            data=bytes.fromhex(v["data_hex"]),
            hash=bytes.fromhex(v["hash"]),
        )
        for v in vectors
    ]


def test_the_game_chain_vectors_chain() -> None:
    """Each game vector's prev_hash is the hash of the one before; the first follows GENESIS."""
    game = [v for v in CHAIN_VECTORS if v["stream"].startswith("game-")]
    assert game[0]["prev_hash"] == GENESIS.hex()
    for before, after in itertools.pairwise(game):
        assert after["prev_hash"] == before["hash"]
    assert verify_chain(_vector_links(game)).ok
    table = [v for v in CHAIN_VECTORS if v["stream"].startswith("table-")]
    assert table[0]["prev_hash"] == hashlib.sha256(b"table event 3").hexdigest()
    start = (3, bytes.fromhex(table[0]["prev_hash"]))
    assert verify_chain(_vector_links(table), after=start).ok


@pytest.mark.parametrize("v", JSON_VECTORS, ids=lambda v: f"json-{v['json_vector']}")
def test_canonical_json_vector(v: dict[str, str]) -> None:
    assert canonical_json(v["json_text"]).hex() == v["json_canonical"]


def test_a_slice_is_verified_from_its_previous_hash() -> None:
    links = GAME
    tail = list(links[2:])
    assert verify_chain(tail, after=(2, links[1].hash)).ok
    assert verify_chain(tail, after=(2, GENESIS)).reason == "hash mismatch"
    assert verify_chain(tail, after=(1, links[1].hash)).reason == "version gap"
    early = verify_chain(tail, after=(2, links[1].hash), anchors={2: links[1].hash})
    assert early.reason == "truncated"


# --- chain v2 (docs/fairness.md, "Version 2" and its vectors) --------------------------------

SEAL_KEY_VECTORS = _doc_blocks("seal_key_vector")
V2_VECTORS = _doc_blocks("chain_v2_vector")


def test_the_doc_has_its_v2_vectors() -> None:
    assert [v["chain_v2_vector"] for v in V2_VECTORS] == ["game-1", "game-2", "game-3", "table-4"]
    assert len(SEAL_KEY_VECTORS) == 1


def test_seal_key_vector() -> None:
    [v] = SEAL_KEY_VECTORS
    message = fairness.encode(b"swarm/seal-key/v2", v["game_id"].encode())
    assert message.hex() == v["seal_key_message"]
    key = seal_key(v["game_id"], bytes.fromhex(v["server_seed"]))
    assert key.hex() == v["seal_key"]
    assert hmac.digest(bytes.fromhex(v["server_seed"]), message, "sha256") == key


@pytest.mark.parametrize("v", V2_VECTORS, ids=lambda v: v["chain_v2_vector"])
def test_chain_v2_vector(v: dict[str, str]) -> None:
    [k] = SEAL_KEY_VECTORS
    keys = {k["game_id"]: bytes.fromhex(k["seal_key"])}
    stream, version = v["stream"], int(v["version"])
    data = json.loads(bytes.fromhex(v["data_hex"]))
    metadata = json.loads(bytes.fromhex(v["metadata_hex"]))
    sealed_data = chain.sealed(stream, version, data, keys)
    assert canonical_value(sealed_data).hex() == v["sealed_data_hex"]
    covered = chain.covered_metadata(stream, version, metadata, keys)
    assert canonical_value(covered).hex() == v["covered_metadata_hex"]
    body_preimage = bytes.fromhex(v["body_preimage"])
    assert body_preimage == fairness.encode(
        b"swarm/event-body/v2",
        stream.encode(),
        fairness.u32(version),
        v["type"].encode(),
        bytes.fromhex(v["sealed_data_hex"]),
        bytes.fromhex(v["covered_metadata_hex"]),
    )
    body = chain.body_digest(stream, version, v["type"], data, metadata, keys)
    assert body.hex() == v["body"] == hashlib.sha256(body_preimage).hexdigest()
    at = msgspec.convert(v["recorded_at"], datetime)
    assert chain.micros(at) == int(v["recorded_at_micros"])
    prev = bytes.fromhex(v["prev_hash"])
    link_preimage = bytes.fromhex(v["link_preimage"])
    stamp = struct.pack(">q", int(v["recorded_at_micros"]))
    assert link_preimage == b"swarm/event/v2" + prev + body + stamp
    assert chain.link_hash_v2(prev, body, at).hex() == v["hash"]
    assert hashlib.sha256(link_preimage).hexdigest() == v["hash"]
    # What is hidden is gone from what the body hashes: no field of the sealed data is a bee.
    hidden = chain.HIDDEN[stream.split("-")[0]].get(v["type"], ())
    for name in hidden:
        assert name not in sealed_data or isinstance(sealed_data[name], str | list)


def test_the_v2_game_vectors_chain_and_verify() -> None:
    [k] = SEAL_KEY_VECTORS
    keys = {k["game_id"]: bytes.fromhex(k["seal_key"])}
    game = [v for v in V2_VECTORS if v["stream"].startswith("game-")]
    links = [
        ChainLink(
            stream=v["stream"],
            version=int(v["version"]),
            type=v["type"],
            data=bytes.fromhex(v["data_hex"]),
            hash=bytes.fromhex(v["hash"]),
            chain=chain.CHAIN_V2,
            metadata=json.loads(bytes.fromhex(v["metadata_hex"])),
            recorded_at=msgspec.convert(v["recorded_at"], datetime),
        )
        for v in game
    ]
    assert verify_chain(links, seal_keys=keys).ok
    # Without the key (during the game) a v2 link cannot be recomputed at all.
    assert not verify_chain(links).ok
    # A time moved back before the event before it is refused even with a matching hash.
    late = msgspec.structs.replace(links[1], recorded_at=links[2].recorded_at)
    assert verify_chain([links[0], late, links[2]], seal_keys=keys).reason == "hash mismatch"
    # One stream, one chain version: a v1 link in a v2 stream fails.
    mixed = msgspec.structs.replace(links[2], chain=chain.CHAIN_V1)
    assert not verify_chain([links[0], links[1], mixed], seal_keys=keys).ok


def test_a_seal_depends_on_key_place_and_value() -> None:
    key, other = bytes(32), bytes([1]) * 32
    base = chain.seal(key, "game-g", 3, "bee", 17)
    assert len(base) == 64 and base == base.lower()
    assert chain.seal(other, "game-g", 3, "bee", 17) != base
    assert chain.seal(key, "game-h", 3, "bee", 17) != base
    assert chain.seal(key, "game-g", 4, "bee", 17) != base
    assert chain.seal(key, "game-g", 3, "by_clock", 17) != base
    assert chain.seal(key, "game-g", 3, "bee", 18) != base
    with pytest.raises(chain.MissingSealKey):
        chain.sealed("game-g", 3, {"type": "bee_tapped", "seat": 1, "bee": 4}, {})


_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=20,
)


@pytest.mark.slow
@given(_JSON_VALUES)
def test_canonical_value_is_canonical_json_on_its_fast_path_too(value: object) -> None:
    """`canonical_value` takes msgspec's sorted encoder for values without floats (issue 28):
    the bytes are exactly the standard library's, whatever the strings and integers."""
    expected = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")
    assert chain.canonical_value(value) == expected
    assert chain.canonical_json(expected) == expected
