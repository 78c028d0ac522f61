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
# Older names of levels, still accepted and recorded as they were sent: a stored event keeps
# its name forever, and plays on at the level it names now.
ALIASES: dict[BeeLevel, BeeLevel] = {"heuristic": "easy", "strong": "medium"}

# Easy is the default: it is what every table had before levels (as "heuristic"), it decides in
# about 0.04 ms where the others spend tens to hundreds of milliseconds of the server's CPU, and
# a player who wants a harder game asks for it. A bee seat recorded with no level (dealt before
# levels existed) played it too.
DEFAULT_LEVEL: BeeLevel = "easy"


def resolved(name: BeeLevel | None) -> BeeLevel:
    """The level a recorded name plays now: an older name is its level's, none the default."""
    name = name or DEFAULT_LEVEL
    return ALIASES.get(name, name)


class SeatInfo(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Who sits in a seat. `player_id` is None for a bee player; `level` is None for a person,
    and for a bee player dealt before levels existed (it played the heuristic).

    Attributes:
        seat: A seat number, from 1.
        name: The name shown to others.
        kind: `person` or `bee` (a bee player, played by the server).
        player_id: The person's player id; null for a bee player.
        level: A bee player's level: how it chooses its bees (README "The bee players"); null for a
            person, and for a bee player dealt before levels existed (it played the heuristic)
    """

    seat: int
    name: str
    kind: SeatKind
    player_id: str | None = None
    # a bee player's level: how it chooses its bees (README "The bee players"); null for a
    # person, and for a bee player dealt before levels existed (it played the heuristic)
    level: BeeLevel | None = None


class Pick(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A revealed pick.

    Attributes:
        seat: Whose pick.
        bee: The bee picked.
    """

    seat: int
    bee: int


class ClockSettings(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Turn and too-low choice durations of a timed (online) game; solo games have none.

    Attributes:
        turn_seconds: Seconds to pick a bee each turn.
        choice_seconds: Seconds to choose a stem when your bee is too low.
    """

    turn_seconds: float = 20.0
    choice_seconds: float = 10.0


class GameEvent(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="type"):
    """Base of every game event."""


class DealProof(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What locks a deal in before turn 1 (docs/fairness.md); hashes and seeds in lowercase hex.

    `client_seeds` has one entry a seat, in seat order: None for a seat that gave no seed
    (every bee player), which the transcript encodes differently from an empty seed.

    Attributes:
        scheme: The version of the fair-deal scheme (docs/fairness.md).
        commitment: SHA-256 of the server's secret seed for the game, lowercase hex, published
            before any seed is contributed (docs/fairness.md).
        client_seeds: Each seat's seed in seat order (lowercase hex), null for a seat that gave none
            (every bee player).
        transcript: SHA-256 of everything the deck is drawn from, lowercase hex.
        fingerprint: SHA-256 of the deal (hands and stems), lowercase hex.
    """

    scheme: int = 1
    commitment: str
    client_seeds: tuple[str | None, ...]
    transcript: str
    fingerprint: str


class DealCommitted(GameEvent, frozen=True, tag="deal_committed"):
    """The server's commitment to this game's secret seed, published before anyone can
    contribute a seed of their own: the first event of a fairly dealt game.

    Attributes:
        game_id: The game's id.
        table_id: The table's id.
        commitment: SHA-256 of the server's secret seed for the game, lowercase hex, published
            before any seed is contributed (docs/fairness.md).
        scheme: The version of the fair-deal scheme (docs/fairness.md).
    """

    game_id: str
    table_id: str
    commitment: str
    scheme: int = 1


class GameStarted(GameEvent, frozen=True, tag="game_started"):
    """The deal: each seat's hand of 10 and the 4 bees that start STEM 1 to STEM 4.

    Attributes:
        seats: Who sits in each seat, seat 1 first.
        hands: Each seat's hand of 10, seat 1 first (every hand: this is the event as stored;
            the views redact it).
        stems: The 4 bees that start STEM 1 to STEM 4.
        clock: The turn and choice durations of a timed (online) game; null for solo.
        proof: What locks the deal in before turn 1 (docs/fairness.md); null for a game dealt
            before fair deals.
        game_id: The game's id.
        table_id: The table's id.
    """

    game_id: str
    table_id: str
    seats: tuple[SeatInfo, ...]
    hands: tuple[tuple[int, ...], ...]
    stems: tuple[int, ...]
    clock: ClockSettings | None = None
    proof: DealProof | None = None  # the transcript and fingerprint of a fair deal


class TurnStarted(GameEvent, frozen=True, tag="turn_started"):
    """A turn began.

    Attributes:
        turn: The turn, 1 to 10.
        deadline: When the clock runs out (UTC); null when untimed.
    """

    turn: int
    deadline: datetime | None = None


class BeeTapped(GameEvent, frozen=True, tag="bee_tapped"):
    """A saved, changeable choice. Hidden from the other seats.

    Attributes:
        seat: A seat number, from 1.
        bee: A bee's number.
    """

    seat: int
    bee: int


class PickConfirmed(GameEvent, frozen=True, tag="pick_confirmed"):
    """A final pick. The bee stays hidden from the other seats until the picks are revealed.

    Attributes:
        by_clock: "none" when the seat confirmed it, otherwise how the turn clock played it:
            the tapped bee, or the lowest when nothing was tapped.
        seat: A seat number, from 1.
        bee: A bee's number.
    """

    seat: int
    bee: int
    by_clock: ClockPlay = "none"


class PicksRevealed(GameEvent, frozen=True, tag="picks_revealed"):
    """Everyone is in: the picks, lowest first, which is the order they fly in.

    Attributes:
        turn: The turn, 1 to 10.
        picks: Every pick, lowest first: the order they fly in.
    """

    turn: int
    picks: tuple[Pick, ...]


class BeeLanded(GameEvent, frozen=True, tag="bee_landed"):
    """A bee landed on a stem. `taken` is non-empty when it was the sixth bee: the 5 it took.

    Attributes:
        seat: Whose bee it was.
        bee: The bee that landed.
        stem: The stem it landed on.
        taken: The 5 bees it took as the sixth bee; empty otherwise.
    """

    seat: int
    bee: int
    stem: int
    taken: tuple[int, ...] = ()


class StemChoiceRequired(GameEvent, frozen=True, tag="stem_choice_required"):
    """A person's bee is too low for every stem: the game waits for them to choose one to take.

    Attributes:
        seat: Whose bee is too low.
        bee: The too-low bee.
        deadline: When the clock runs out (UTC); null when untimed.
    """

    seat: int
    bee: int
    deadline: datetime | None = None


class StemTaken(GameEvent, frozen=True, tag="stem_taken"):
    """A too-low bee took every bee of a stem and starts it again alone.

    Attributes:
        seat: Whose bee took it.
        bee: The too-low bee, now alone on the stem.
        stem: The stem taken.
        taken: Every bee the stem held.
        chosen_by: `player`, `rule` (a bee player's or a leaver's bee: the cheapest) or `clock` (the
            choice clock ran out, or the clock played the lowest bee).
    """

    seat: int
    bee: int
    stem: int
    taken: tuple[int, ...]
    chosen_by: Chooser = "player"


class SeatLeft(GameEvent, frozen=True, tag="seat_left"):
    """A person left mid-game: no more picks, and their stings stop counting.

    Attributes:
        seat: The seat that left.
    """

    seat: int


class GameEnded(GameEvent, frozen=True, tag="game_ended"):
    """Final stings by seat (index 0 is seat 1) and the winners, who share the win.

    Attributes:
        stings: Final stings by seat, index 0 is seat 1.
        winners: The winning seats (they share the win); empty when abandoned.
        reason: `finished`, `last_person_standing` or `abandoned`.
    """

    stings: tuple[int, ...]
    winners: tuple[int, ...]
    reason: EndReason = "finished"


class DealRevealed(GameEvent, frozen=True, tag="deal_revealed"):
    """After the game: the secret seed and the deck order it gave, so anyone can check the
    commitment and the fingerprint (docs/fairness.md).

    Attributes:
        server_seed: The server's secret seed, lowercase hex: its SHA-256 is the commitment.
        deck_order: The deck in the order it was dealt.
    """

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
