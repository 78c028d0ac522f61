"""The provably fair deal (service/domain/fairness.py, docs/fairness.md).

The test vectors are read from docs/fairness.md itself, so the document cannot drift from the code.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from service.domain import fairness
from service.domain.fairness import (
    SCHEME_VERSION,
    STEP_NAMES,
    Published,
    StepName,
    commitment,
    deal,
    deck_order,
    derive,
    fingerprint,
    new_server_seed,
    shuffle,
    shuffle_words,
    stream_block,
    stream_words,
    transcript_hash,
    verified,
    verify,
)
from service.domain.rules.cards import HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, deck
from service.domain.rules.commands import StartGame
from service.domain.rules.engine import decide, initial_state
from service.domain.rules.events import GameStarted, SeatInfo

DOC = Path(__file__).resolve().parents[2] / "docs" / "fairness.md"


def _text_blocks(first_key: str) -> list[dict[str, str]]:
    """The doc's ```text blocks whose first line is `first_key: …`, as key → value."""
    blocks = re.findall(r"```text\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    parsed = []
    for block in blocks:
        lines = block.strip().splitlines()
        if lines and lines[0].startswith(f"{first_key}: "):
            parsed.append(dict(line.split(": ", 1) for line in lines))
    return parsed


VECTORS = _text_blocks("vector")
SEED_VECTORS = _text_blocks("seed_vector")
SHUFFLE_VECTORS = _text_blocks("shuffle_n")


def _bees(text: str) -> tuple[int, ...]:
    return tuple(int(bee) for bee in text.split())


def _seed(text: str) -> bytes | None:
    if text == "none":
        return None
    if text == "empty":
        return b""
    return bytes.fromhex(text)


def _vector_inputs(v: dict[str, str]) -> tuple[str, bytes, list[bytes | None]]:
    players = int(v["players"])
    seeds = [_seed(v[f"client_seed.{seat}"]) for seat in range(1, players + 1)]
    return v["game_id"], bytes.fromhex(v["server_seed"]), seeds


# --- test vectors ----------------------------------------------------------------------------


def test_seed_commitment_vector() -> None:
    """docs/fairness.md, "Seeds: commit, then reveal": the hash a person commits to."""
    assert len(SEED_VECTORS) == 1
    (v,) = SEED_VECTORS
    seed = bytes.fromhex(v["seed"])
    digest = fairness.seed_commitment(v["game_id"], v["player_id"], seed)
    assert digest.hex() == v["seed_hash"]
    preimage = bytes.fromhex(v["seed_hash_preimage"])
    assert (
        fairness.encode(fairness.TAG_SEED, v["game_id"].encode(), v["player_id"].encode(), seed)
        == preimage
    )
    assert hashlib.sha256(preimage).hexdigest() == v["seed_hash"]
    with pytest.raises(ValueError, match="at most 64"):
        fairness.seed_commitment(v["game_id"], v["player_id"], bytes(65))


def test_the_doc_has_its_vectors() -> None:
    assert [v["vector"] for v in VECTORS] == ["1", "2"]
    assert len(SHUFFLE_VECTORS) == 1
    assert any(v.get("client_seed.2") == "none" for v in VECTORS)
    assert "commitment_preimage" in VECTORS[0]


@pytest.mark.parametrize("v", VECTORS, ids=lambda v: f"vector-{v['vector']}")
def test_vector(v: dict[str, str]) -> None:
    game_id, server_seed, seeds = _vector_inputs(v)
    players = int(v["players"])
    commit = commitment(game_id, server_seed)
    assert commit.hex() == v["commitment"]
    transcript = transcript_hash(game_id, players, commit, seeds)
    assert transcript.hex() == v["transcript"]
    assert stream_block(server_seed, transcript, 0).hex() == v["block0"]
    words = list(itertools.islice(stream_words(server_seed, transcript), 8))
    assert words == [int(w) for w in v["block0_words"].split()]
    order = deck_order(server_seed, transcript, players)
    assert order == _bees(v["deck_order"])
    hands, stems = deal(order, players)
    assert hands == tuple(_bees(v[f"hand.{seat}"]) for seat in range(1, players + 1))
    assert stems == _bees(v["stems"])
    assert fingerprint(transcript, server_seed, hands, stems).hex() == v["fingerprint"]

    published = derive(game_id, server_seed, seeds)
    assert (published.commitment, published.transcript) == (commit, transcript)
    assert verified(verify(published))


@pytest.mark.parametrize("v", VECTORS, ids=lambda v: f"vector-{v['vector']}")
def test_vector_preimages_are_what_is_hashed(v: dict[str, str]) -> None:
    """The byte dumps in the doc hash to the doc's values (checked where the doc gives them)."""
    game_id, server_seed, _ = _vector_inputs(v)
    for name in ("commitment", "transcript", "fingerprint"):
        if f"{name}_preimage" in v:
            preimage = bytes.fromhex(v[f"{name}_preimage"])
            assert hashlib.sha256(preimage).hexdigest() == v[name]
    if "commitment_preimage" in v:
        tag = b"swarm/commit/v1"
        assert bytes.fromhex(v["commitment_preimage"]).startswith(len(tag).to_bytes(4, "big") + tag)
        assert game_id.encode() in bytes.fromhex(v["commitment_preimage"])
    if "block0_message" in v:
        block = hmac.digest(server_seed, bytes.fromhex(v["block0_message"]), "sha256")
        assert block.hex() == v["block0"]


@pytest.mark.parametrize("v", SHUFFLE_VECTORS, ids=lambda v: f"n-{v['shuffle_n']}")
def test_shuffle_vector_exercises_rejection(v: dict[str, str]) -> None:
    words = [int(w) for w in v["shuffle_words"].split()]
    fed = iter(words)
    assert shuffle_words(int(v["shuffle_n"]), fed) == _bees(v["shuffle_order"])
    assert next(fed, None) is None  # every word was consumed, the rejected ones included


# --- the shuffle -----------------------------------------------------------------------------


def test_rejection_bound_is_exact() -> None:
    """m = 3: 2**32 mod 3 = 1, so only the top word 2**32 - 1 is rejected; the one below is kept."""
    top = 2**32 - 1
    assert shuffle_words(3, iter([top - 1, 1])) == (1, 2, 3)  # (2**32-2) mod 3 = 2 = i: no swap
    with pytest.raises(StopIteration):
        shuffle_words(3, iter([top, top, top]))  # rejected words are consumed, never used
    # m = 2 divides 2**32: even the top word is kept (the only word there is); j = 1 = i
    assert shuffle_words(2, iter([top])) == (1, 2)


def test_swap_indices_map_one_to_one_onto_permutations() -> None:
    """Each tuple of swap indices (j3, j2, j1) with j_i in 0..i gives a different order of 4."""
    orders = {
        shuffle_words(4, iter(choice)) for choice in itertools.product(range(4), range(3), range(2))
    }
    assert len(orders) == math.factorial(4)


def test_deck_orders_are_permutations_for_every_table_size() -> None:
    server_seed = bytes(range(32))
    for players in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        for salt in range(5):
            transcript = hashlib.sha256(bytes([players, salt])).digest()
            order = deck_order(server_seed, transcript, players)
            assert sorted(order) == list(deck(players))


def test_determinism() -> None:
    seeds: list[bytes | None] = [b"x", None, b"", b"y" * 64]
    first = derive("g", bytes(32), seeds)
    assert derive("g", bytes(32), seeds) == first
    assert shuffle(44, bytes(32), first.transcript) == first.deck_order


def test_new_server_seed_is_fresh_32_bytes() -> None:
    seeds = {new_server_seed() for _ in range(8)}
    assert len(seeds) == 8
    assert all(len(seed) == 32 for seed in seeds)


def test_deal_matches_the_rules_engine() -> None:
    published = derive("game-1", bytes(range(32)), [b"a", None, b"c"])
    seats = tuple(
        SeatInfo(seat=n, name=f"P{n}", kind="person", player_id=f"p{n}") for n in (1, 2, 3)
    )
    command = StartGame(
        game_id="game-1", table_id="t", seats=seats, deck_order=published.deck_order
    )
    started = decide(command, initial_state)[0]
    assert isinstance(started, GameStarted)
    assert (started.hands, started.stems) == (published.hands, published.stems)


# --- the encoding ----------------------------------------------------------------------------


def test_none_and_empty_seeds_are_different_transcripts() -> None:
    commit = commitment("g", bytes(32))
    none = transcript_hash("g", 2, commit, [b"a", None])
    empty = transcript_hash("g", 2, commit, [b"a", b""])
    zero = transcript_hash("g", 2, commit, [b"a", b"\x00"])
    assert len({none, empty, zero}) == 3


def test_field_boundaries_are_unambiguous() -> None:
    commit = commitment("g", bytes(32))
    assert transcript_hash("g", 2, commit, [b"ab", b"c"]) != transcript_hash(
        "g", 2, commit, [b"a", b"bc"]
    )


def test_bad_inputs_are_refused() -> None:
    commit = commitment("g", bytes(32))
    with pytest.raises(ValueError):
        commitment("g", bytes(31))
    with pytest.raises(ValueError):
        transcript_hash("g", 2, commit, [None])  # one entry per seat
    with pytest.raises(ValueError):
        transcript_hash("g", 2, commit, [b"x" * 65, None])
    with pytest.raises(ValueError):
        transcript_hash("g", 1, commit, [None])
    with pytest.raises(ValueError):
        deal(tuple(range(1, 24)), 2)
    assert SCHEME_VERSION == 1


# --- verification: each tampering fails at its own step --------------------------------------


BASE = derive(
    "8f14e45f-ceea-467a-9af0-4b4b1f6b8e1a",
    hashlib.sha256(b"base").digest(),
    [b"alice", None, b"carol", b"dave"],
)


def _flip_bit(data: bytes, bit: int = 0) -> bytes:
    return bytes([data[0] ^ (1 << bit)]) + data[1:]


def _swap_bees_between_hands(p: Published) -> Published:
    h = [list(hand) for hand in p.hands]
    h[0][0], h[1][0] = h[1][0], h[0][0]
    return replace(p, hands=tuple(tuple(hand) for hand in h))


def _swap_hands(p: Published) -> Published:
    h = list(p.hands)
    h[0], h[2] = h[2], h[0]
    return replace(p, hands=tuple(h))


def _swap_deck(p: Published) -> Published:
    d = list(p.deck_order)
    d[0], d[-1] = d[-1], d[0]
    return replace(p, deck_order=tuple(d))


def _consistent_other_deal(p: Published) -> Published:
    """A different deck dealt consistently, under the fingerprint published before turn 1."""
    other = _swap_deck(p)
    hands, stems = deal(other.deck_order, p.players)
    return replace(other, hands=hands, stems=stems)


def _seat_reseeded(p: Published, seeds: tuple[bytes | None, ...]) -> Published:
    """The server ran the scheme with other seeds but published the seats' real ones."""
    other = derive(p.game_id, p.server_seed, seeds)
    return replace(other, client_seeds=p.client_seeds)


TAMPERINGS: dict[str, tuple[Callable[[Published], Published], StepName]] = {
    "server seed, one bit flipped": (
        lambda p: replace(p, server_seed=_flip_bit(p.server_seed)),
        "commitment",
    ),
    "server seed, last bit flipped": (
        lambda p: replace(p, server_seed=p.server_seed[:-1] + bytes([p.server_seed[-1] ^ 0x80])),
        "commitment",
    ),
    "server seed, wrong length": (
        lambda p: replace(p, server_seed=p.server_seed[:31]),
        "commitment",
    ),
    "another game id": (lambda p: replace(p, game_id="another-game"), "commitment"),
    "client seed changed": (
        lambda p: replace(p, client_seeds=(b"alicf", *p.client_seeds[1:])),
        "transcript",
    ),
    "client seed moved to another seat": (
        lambda p: replace(p, client_seeds=(None, b"alice", *p.client_seeds[2:])),
        "transcript",
    ),
    "client seed dropped": (
        lambda p: replace(p, client_seeds=(None, *p.client_seeds[1:])),
        "transcript",
    ),
    "none recorded as an empty seed": (
        lambda p: replace(p, client_seeds=(p.client_seeds[0], b"", *p.client_seeds[2:])),
        "transcript",
    ),
    "a seat entry missing": (lambda p: replace(p, client_seeds=p.client_seeds[:-1]), "transcript"),
    "server ignored a seat's seed": (
        lambda p: _seat_reseeded(p, (b"alice", None, None, b"dave")),
        "transcript",
    ),
    "deck order changed": (_swap_deck, "deck"),
    "deck and deal changed together": (_consistent_other_deal, "deck"),
    "two bees swapped between hands": (_swap_bees_between_hands, "deal"),
    "hands swapped between seats": (_swap_hands, "deal"),
    "stems changed": (lambda p: replace(p, stems=p.stems[::-1]), "deal"),
    "a hand missing": (lambda p: replace(p, hands=p.hands[:-1]), "deal"),
    "fingerprint changed": (
        lambda p: replace(p, fingerprint=_flip_bit(p.fingerprint)),
        "fingerprint",
    ),
}


def test_an_honest_game_verifies() -> None:
    steps = verify(BASE)
    assert [step.name for step in steps] == list(STEP_NAMES)
    assert all(step.status == "ok" for step in steps)
    assert verified(steps)


@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_tampering_fails_at_the_right_step(name: str) -> None:
    tamper, failing = TAMPERINGS[name]
    steps = verify(tamper(BASE))
    assert [step.name for step in steps] == list(STEP_NAMES)
    at = STEP_NAMES.index(failing)
    assert [step.status for step in steps] == ["ok"] * at + ["failed"] + ["skipped"] * (4 - at)
    assert steps[at].reason
    assert not verified(steps)


def test_failure_reasons_show_lowercase_hex() -> None:
    step = verify(replace(BASE, fingerprint=_flip_bit(BASE.fingerprint)))[-1]
    assert BASE.fingerprint.hex() in step.reason
    assert _flip_bit(BASE.fingerprint).hex() in step.reason


def test_a_swapped_deal_also_breaks_the_fingerprint() -> None:
    """The deal step catches it first; the fingerprint alone would catch it too."""
    tampered = _swap_bees_between_hands(BASE)
    assert fingerprint(BASE.transcript, BASE.server_seed, tampered.hands, tampered.stems) != (
        BASE.fingerprint
    )


# --- statistics of the shuffle ---------------------------------------------------------------


def test_small_deck_orders_are_uniform() -> None:
    """n = 4 over 24 * 400 transcripts: every order appears and chi-square does not reject."""
    orders = math.factorial(4)
    draws = orders * 400
    server_seed = hashlib.sha256(b"uniformity").digest()
    counts = Counter(
        shuffle(4, server_seed, hashlib.sha256(k.to_bytes(4, "big")).digest()) for k in range(draws)
    )
    assert len(counts) == orders
    expected = draws / orders
    chi_square = sum((seen - expected) ** 2 / expected for seen in counts.values())
    assert chi_square < 49.73  # 99.9% critical value, 23 degrees of freedom


@pytest.mark.slow
def test_every_bee_lands_in_every_hand_about_equally() -> None:
    """n = 44 (four players): each bee is in each hand with p = 10/44, on the stems with 4/44."""
    players, draws = 4, 8000
    server_seed = hashlib.sha256(b"positions").digest()
    counts: Counter[tuple[int, int]] = Counter()
    for k in range(draws):
        order = deck_order(server_seed, hashlib.sha256(b"p" + k.to_bytes(4, "big")).digest(), 4)
        for position, bee in enumerate(order):
            counts[bee, min(position // HAND_SIZE, players)] += 1  # region `players` = the stems
    for bee in deck(players):
        for region in range(players + 1):
            p = 4 / 44 if region == players else 10 / 44
            mean, sigma = draws * p, math.sqrt(draws * p * (1 - p))
            assert abs(counts[bee, region] - mean) < 5 * sigma, (bee, region)


def test_the_module_does_no_io() -> None:
    """Only new_server_seed touches randomness; nothing opens files or sockets."""
    source = Path(fairness.__file__).read_text(encoding="utf-8")
    assert source.count("secrets.") == 1
    assert "open(" not in source
