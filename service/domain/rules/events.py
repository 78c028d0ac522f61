"""What happened in a game: past-tense facts, stored forever.

Stored events are a contract with every game ever played: a new field always gets a default, an
existing field never changes type, a tag is never reused (msgspec "Schema Evolution").
`tests/unit/test_event_fixtures.py` decodes events stored by earlier versions.

Seats are numbered from 1 and stems 1–4 here, as the seed and every client number them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from service.domain.codec import TaggedCodec, tag_of

SeatKind = Literal["person", "bee"]
EndReason = Literal["finished", "last_person_standing", "abandoned"]
# Who chose the stem a too-low bee took: its player; the rule (a bee player's bee, or a leaver's);
# or the clock (the choice clock ran out, or the clock played the seat's lowest bee and it was
# too low, so there was no choice, seed §7).
Chooser = Literal["player", "rule", "clock"]
# How a pick was made: "none", the seat confirmed it; "tapped", the turn clock ran out and flew
# the bee the seat had tapped; "lowest", the turn clock ran out with nothing tapped and flew the
# seat's lowest bee (seed §7).
ClockPlay = Literal["none", "tapped", "lowest"]
# How a bee player chooses its bee (`service.domain.rules.levels`, the one list): "easy",
# "medium", "hard" or "expert"; "heuristic" and "strong" are the older names of easy and medium,
# still accepted and recorded as sent, so every stored event decodes. Recorded in the seat so an
# audit knows which policy to re-run; replays never need it.
BeeLevel = Literal["heuristic", "strong", "expert", "easy", "medium", "hard"]


class SeatInfo(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Who sits in a seat. `player_id` is None for a bee player; `level` is None for a person,
    and for a bee player dealt before levels existed (it played the heuristic)."""

    seat: int
    name: str
    kind: SeatKind
    player_id: str | None = None
    # a bee player's level: how it chooses its bees (README "The bee players"); null for a
    # person, and for a bee player dealt before levels existed (it played the heuristic)
    level: BeeLevel | None = None


class Pick(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    seat: int
    bee: int


class ClockSettings(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Turn and too-low choice durations of a timed (online) game; solo games have none."""

    turn_seconds: float = 20.0
    choice_seconds: float = 10.0


class GameEvent(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="type"):
    """Base of every game event."""


class DealProof(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What locks a deal in before turn 1 (docs/fairness.md); hashes and seeds in lowercase hex.

    `client_seeds` has one entry a seat, in seat order: None for a seat that gave no seed
    (every bee player), which the transcript encodes differently from an empty seed."""

    scheme: int = 1
    commitment: str
    client_seeds: tuple[str | None, ...]
    transcript: str
    fingerprint: str


class DealCommitted(GameEvent, frozen=True, tag="deal_committed"):
    """The server's commitment to this game's secret seed, published before anyone can
    contribute a seed of their own: the first event of a fairly dealt game."""

    game_id: str
    table_id: str
    commitment: str
    scheme: int = 1


class GameStarted(GameEvent, frozen=True, tag="game_started"):
    """The deal: each seat's hand of 10 and the 4 bees that start STEM 1 to STEM 4."""

    game_id: str
    table_id: str
    seats: tuple[SeatInfo, ...]
    hands: tuple[tuple[int, ...], ...]
    stems: tuple[int, ...]
    clock: ClockSettings | None = None
    proof: DealProof | None = None  # the transcript and fingerprint of a fair deal


class TurnStarted(GameEvent, frozen=True, tag="turn_started"):
    turn: int
    deadline: datetime | None = None


class BeeTapped(GameEvent, frozen=True, tag="bee_tapped"):
    """A saved, changeable choice. Hidden from the other seats."""

    seat: int
    bee: int


class PickConfirmed(GameEvent, frozen=True, tag="pick_confirmed"):
    """A final pick. The bee stays hidden from the other seats until the picks are revealed.

    `by_clock` is "none" when the seat confirmed it, otherwise how the turn clock played it
    (see `ClockPlay`).
    """

    seat: int
    bee: int
    by_clock: ClockPlay = "none"


class PicksRevealed(GameEvent, frozen=True, tag="picks_revealed"):
    """Everyone is in: the picks, lowest first, which is the order they fly in."""

    turn: int
    picks: tuple[Pick, ...]


class BeeLanded(GameEvent, frozen=True, tag="bee_landed"):
    """A bee landed on a stem. `taken` is non-empty when it was the sixth bee: the 5 it took."""

    seat: int
    bee: int
    stem: int
    taken: tuple[int, ...] = ()


class StemChoiceRequired(GameEvent, frozen=True, tag="stem_choice_required"):
    """A person's bee is too low for every stem: the game waits for them to choose one to take."""

    seat: int
    bee: int
    deadline: datetime | None = None


class StemTaken(GameEvent, frozen=True, tag="stem_taken"):
    """A too-low bee took every bee of a stem and starts it again alone."""

    seat: int
    bee: int
    stem: int
    taken: tuple[int, ...]
    chosen_by: Chooser = "player"


class SeatLeft(GameEvent, frozen=True, tag="seat_left"):
    """A person left mid-game: no more picks, and their stings stop counting."""

    seat: int


class GameEnded(GameEvent, frozen=True, tag="game_ended"):
    """Final stings by seat (index 0 is seat 1) and the winners, who share the win."""

    stings: tuple[int, ...]
    winners: tuple[int, ...]
    reason: EndReason = "finished"


class DealRevealed(GameEvent, frozen=True, tag="deal_revealed"):
    """After the game: the secret seed and the deck order it gave, so anyone can check the
    commitment and the fingerprint (docs/fairness.md)."""

    server_seed: str
    deck_order: tuple[int, ...]


Event = (
    DealCommitted
    | GameStarted
    | TurnStarted
    | BeeTapped
    | PickConfirmed
    | PicksRevealed
    | BeeLanded
    | StemChoiceRequired
    | StemTaken
    | SeatLeft
    | GameEnded
    | DealRevealed
)

EVENT_TYPES: tuple[type[GameEvent], ...] = (
    DealCommitted,
    GameStarted,
    TurnStarted,
    BeeTapped,
    PickConfirmed,
    PicksRevealed,
    BeeLanded,
    StemChoiceRequired,
    StemTaken,
    SeatLeft,
    GameEnded,
    DealRevealed,
)

_codec: TaggedCodec[Event] = TaggedCodec(Event)
# A whole stream as one JSON array (EventStore.read_events): one call into msgspec for a rebuild.
_list_decoder = msgspec.json.Decoder(list[Event])


def encode_event(event: GameEvent) -> bytes:
    return _codec.encode(event)


def decode_event(data: bytes | str) -> Event:
    return _codec.decode(data)


def decode_events(data: bytes | str) -> list[Event]:
    """A JSON array of stored events, decoded straight into their structs."""
    return _list_decoder.decode(data)


def event_type(event: GameEvent) -> str:
    return tag_of(event)
