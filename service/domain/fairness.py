"""Provably fair dealing (seed §9, "A fair deal"): commit, contribute, shuffle, fingerprint, verify.

The scheme, byte for byte, is in docs/fairness.md; this module is its reference implementation.
Everything here is pure (no I/O, no clock) except `new_server_seed`, the one place that reads the
operating system's CSPRNG.

    server_seed  = new_server_seed()                          # secret until the game ends
    commit       = commitment(game_id, server_seed)           # published first
    transcript   = transcript_hash(game_id, players, commit, client_seeds)
    order        = deck_order(server_seed, transcript)        # -> StartGame.deck_order
    hands, stems = deal(order, players)
    print_       = fingerprint(transcript, server_seed, hands, stems)  # published before turn 1

`verify` re-derives all of it from the published values and names the first step that disagrees.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from service.domain.rules.cards import HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, STEM_COUNT, deck_size

SCHEME_VERSION = 1
SERVER_SEED_BYTES = 32
MAX_CLIENT_SEED_BYTES = 64

TAG_COMMIT = b"swarm/commit/v1"
TAG_TRANSCRIPT = b"swarm/transcript/v1"
TAG_DECK = b"swarm/deck/v1"
TAG_FINGERPRINT = b"swarm/fingerprint/v1"
TAG_SEED = b"swarm/seed/v1"

# A seat's entry in the transcript: one marker byte, then the seed itself if there is one.
_NO_SEED = b"\x00"
_SEED = b"\x01"

_WORD_SPACE = 1 << 32  # words are unsigned 32-bit: 0 .. 2**32 - 1

Hands = tuple[tuple[int, ...], ...]
StepName = Literal["commitment", "transcript", "deck", "deal", "fingerprint"]
StepStatus = Literal["ok", "failed", "skipped"]
STEP_NAMES: tuple[StepName, ...] = ("commitment", "transcript", "deck", "deal", "fingerprint")


# --- canonical encoding ----------------------------------------------------------------------


def u32(value: int) -> bytes:
    """An integer as 4 bytes, unsigned big-endian."""
    if not 0 <= value < _WORD_SPACE:
        raise ValueError(f"{value} does not fit in an unsigned 32-bit integer")
    return value.to_bytes(4, "big")


def encode(tag: bytes, *fields: bytes) -> bytes:
    """The canonical encoding: the tag, then each field, each as u32(len) || bytes."""
    return b"".join(u32(len(part)) + part for part in (tag, *fields))


def _bees(bees: Iterable[int]) -> bytes:
    return b"".join(u32(bee) for bee in bees)


def _seat_entry(seed: bytes | None) -> bytes:
    return _NO_SEED if seed is None else _SEED + seed


# --- the scheme --------------------------------------------------------------------------------


def new_server_seed() -> bytes:
    """A fresh, secret 32-byte server seed for one game: the only randomness of the scheme."""
    return secrets.token_bytes(SERVER_SEED_BYTES)


def _check_server_seed(server_seed: bytes) -> None:
    if len(server_seed) != SERVER_SEED_BYTES:
        raise ValueError(
            f"the server seed is {len(server_seed)} bytes; it must be {SERVER_SEED_BYTES}"
        )


def commitment(game_id: str, server_seed: bytes) -> bytes:
    """SHA-256 binding the server seed to this game; published before anyone contributes."""
    _check_server_seed(server_seed)
    return hashlib.sha256(encode(TAG_COMMIT, game_id.encode("utf-8"), server_seed)).digest()


def seed_commitment(game_id: str, player_id: str, seed: bytes) -> bytes:
    """SHA-256 a person gives instead of their seed while seeds are being committed: it binds
    the seed to this game and this person, so it can be neither copied nor moved."""
    if len(seed) > MAX_CLIENT_SEED_BYTES:
        raise ValueError(f"a seed is at most {MAX_CLIENT_SEED_BYTES} bytes, not {len(seed)}")
    preimage = encode(TAG_SEED, game_id.encode("utf-8"), player_id.encode("utf-8"), seed)
    return hashlib.sha256(preimage).digest()


def transcript_hash(
    game_id: str, players: int, commitment: bytes, client_seeds: Sequence[bytes | None]
) -> bytes:
    """SHA-256 over the version, game, player count, commitment and every seat's seed (or none).

    `client_seeds[i]` is seat i+1's contribution; None for a seat that gave none (every bee seat).
    """
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"a game has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    if len(client_seeds) != players:
        raise ValueError(f"{len(client_seeds)} seat entries for {players} players")
    if len(commitment) != hashlib.sha256().digest_size:
        raise ValueError(f"the commitment is {len(commitment)} bytes; it must be 32")
    for seat, seed in enumerate(client_seeds, start=1):
        if seed is not None and len(seed) > MAX_CLIENT_SEED_BYTES:
            raise ValueError(
                f"seat {seat}'s seed is {len(seed)} bytes; at most {MAX_CLIENT_SEED_BYTES}"
            )
    preimage = encode(
        TAG_TRANSCRIPT,
        u32(SCHEME_VERSION),
        game_id.encode("utf-8"),
        u32(players),
        commitment,
        *(_seat_entry(seed) for seed in client_seeds),
    )
    return hashlib.sha256(preimage).digest()


def stream_block(server_seed: bytes, transcript: bytes, k: int) -> bytes:
    """Block k (from 0) of the deck stream.

    HMAC-SHA256 keyed by the server seed over encode(TAG_DECK, transcript, u32(k)).
    """
    _check_server_seed(server_seed)
    return hmac.digest(server_seed, encode(TAG_DECK, transcript, u32(k)), "sha256")


def stream_words(server_seed: bytes, transcript: bytes) -> Iterator[int]:
    """The deck stream as unsigned 32-bit big-endian words: block 0's 8 words, then block 1's…"""
    for k in range(_WORD_SPACE):
        block = stream_block(server_seed, transcript, k)
        for offset in range(0, len(block), 4):
            yield int.from_bytes(block[offset : offset + 4], "big")
    raise RuntimeError("the deck stream is exhausted")  # pragma: no cover - 2**35 words


def shuffle_words(n: int, words: Iterator[int]) -> tuple[int, ...]:
    """Fisher–Yates over bees 1..n, drawing each swap index from `words` by rejection sampling.

    For i from n-1 down to 1: m = i+1; take words until one is below m * floor(2**32 / m)
    (the largest multiple of m not above 2**32); j = word mod m (0 <= j <= i); swap a[i], a[j].
    """
    if n < 1:
        raise ValueError(f"a deck holds at least one bee, not {n}")
    order = list(range(1, n + 1))
    for i in range(n - 1, 0, -1):
        m = i + 1
        bound = m * (_WORD_SPACE // m)
        word = next(words)
        while word >= bound:
            word = next(words)
        j = word % m
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def shuffle(n: int, server_seed: bytes, transcript: bytes) -> tuple[int, ...]:
    """A permutation of bees 1..n from the deck stream (any n, for tests of the shuffle)."""
    return shuffle_words(n, stream_words(server_seed, transcript))


def deck_order(server_seed: bytes, transcript: bytes, players: int) -> tuple[int, ...]:
    """The game's deck order: the shuffle of bees 1..(10 * players + 4)."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"a game has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    return shuffle(deck_size(players), server_seed, transcript)


def deal(order: Sequence[int], players: int) -> tuple[Hands, tuple[int, ...]]:
    """The rules' deal: seat i gets order[10(i-1):10i], and the next 4 bees start the stems."""
    if len(order) != deck_size(players):
        raise ValueError(
            f"{len(order)} bees for {players} players; the deck holds {deck_size(players)}"
        )
    hands = tuple(tuple(order[s * HAND_SIZE : (s + 1) * HAND_SIZE]) for s in range(players))
    stems = tuple(order[players * HAND_SIZE : players * HAND_SIZE + STEM_COUNT])
    return hands, stems


def fingerprint(
    transcript: bytes, server_seed: bytes, hands: Sequence[Sequence[int]], stems: Sequence[int]
) -> bytes:
    """SHA-256 binding the transcript, the server seed and the whole deal (hands as dealt)."""
    _check_server_seed(server_seed)
    preimage = encode(
        TAG_FINGERPRINT,
        transcript,
        server_seed,
        u32(len(hands)),
        *(_bees(hand) for hand in hands),
        _bees(stems),
    )
    return hashlib.sha256(preimage).digest()


# --- one game's record, and its verification ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Published:
    """Everything a game publishes about its deal.

    Before any seat contributes: game_id, players, commitment. Before turn 1: client_seeds,
    transcript, fingerprint. After the game ends: server_seed, deck_order, hands, stems.
    """

    game_id: str
    players: int
    commitment: bytes
    client_seeds: tuple[bytes | None, ...]
    transcript: bytes
    fingerprint: bytes
    server_seed: bytes
    deck_order: tuple[int, ...]
    hands: Hands
    stems: tuple[int, ...]


def derive(game_id: str, server_seed: bytes, client_seeds: Sequence[bytes | None]) -> Published:
    """Run the whole scheme for one game (one seat entry per seat, in seat order)."""
    players = len(client_seeds)
    commit = commitment(game_id, server_seed)
    transcript = transcript_hash(game_id, players, commit, client_seeds)
    order = deck_order(server_seed, transcript, players)
    hands, stems = deal(order, players)
    return Published(
        game_id=game_id,
        players=players,
        commitment=commit,
        client_seeds=tuple(client_seeds),
        transcript=transcript,
        fingerprint=fingerprint(transcript, server_seed, hands, stems),
        server_seed=server_seed,
        deck_order=order,
        hands=hands,
        stems=stems,
    )


@dataclass(frozen=True, slots=True)
class Step:
    """One check of `verify`: ok, failed (with the reason), or skipped after an earlier failure."""

    name: StepName
    status: StepStatus
    reason: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _check(name: StepName, published: Published) -> str | None:
    """None if step `name` agrees with the published values, else why not."""
    p = published
    if name == "commitment":
        got = commitment(p.game_id, p.server_seed)
        if got != p.commitment:
            return (
                f"commitment(game id, server seed) is {got.hex()}, "
                f"but {p.commitment.hex()} was published"
            )
    elif name == "transcript":
        got = transcript_hash(p.game_id, p.players, p.commitment, p.client_seeds)
        if got != p.transcript:
            return (
                f"the transcript of the published seeds is {got.hex()}, "
                f"but {p.transcript.hex()} was published"
            )
    elif name == "deck":
        order = deck_order(p.server_seed, p.transcript, p.players)
        if order != tuple(p.deck_order):
            return f"the shuffle gives {_show(order)}, but {_show(p.deck_order)} was published"
    elif name == "deal":
        hands, stems = deal(p.deck_order, p.players)
        published_hands = tuple(tuple(hand) for hand in p.hands)
        if len(published_hands) != len(hands):
            return f"{len(published_hands)} hands were published for {p.players} players"
        for seat, (want, have) in enumerate(zip(hands, published_hands, strict=True), start=1):
            if want != have:
                return f"seat {seat} was dealt {_show(want)}, but {_show(have)} was published"
        if stems != tuple(p.stems):
            return f"the stems were dealt {_show(stems)}, but {_show(p.stems)} was published"
    else:
        got = fingerprint(p.transcript, p.server_seed, p.hands, p.stems)
        if got != p.fingerprint:
            return (
                f"the fingerprint of the published deal is {got.hex()}, "
                f"but {p.fingerprint.hex()} was published"
            )
    return None


def _show(bees: Sequence[int]) -> str:
    return " ".join(str(bee) for bee in bees)


def verify(published: Published) -> list[Step]:
    """Re-derive the deal from the published values: one Step per name in STEP_NAMES, in order.

    The checks run in order and stop at the first failure: that step is "failed" with the reason,
    and every later step is "skipped" (not checked, so neither passed nor failed). The deal is
    verified exactly when every step is "ok".
    """
    steps: list[Step] = []
    failed = False
    for name in STEP_NAMES:
        if failed:
            steps.append(Step(name, "skipped", "not checked: an earlier step failed"))
            continue
        try:
            reason = _check(name, published)
        except ValueError as error:
            reason = str(error)
        if reason is None:
            steps.append(Step(name, "ok", ""))
        else:
            steps.append(Step(name, "failed", reason))
            failed = True
    return steps


def verified(steps: Sequence[Step]) -> bool:
    """True when every step of a `verify` report is ok."""
    return bool(steps) and all(step.ok for step in steps)
