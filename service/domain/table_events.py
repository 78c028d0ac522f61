"""The table stream's events (`table-<id>`), and how they are stored.

`service/domain/tables.py` folds and decides them; this module only says what each one records.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from service.domain.codec import TaggedCodec, tag_of
from service.domain.rules.events import BeeLevel, ClockSettings, EndReason, SeatInfo, SeatKind

__all__ = [
    "BuyInHeld",
    "BuyInReturned",
    "GameFinished",
    "GameOpened",
    "GamePrepared",
    "HostChanged",
    "PotFormed",
    "PotSettled",
    "SeatFreed",
    "SeatTaken",
    "SeedCommitted",
    "SeedContributed",
    "SeedRevealed",
    "SeedWithheld",
    "SeedsClosed",
    "Stake",
    "TableClosedEvent",
    "TableEvent",
    "TableEventUnion",
    "TableMode",
    "TableOpened",
    "decode_table_event",
    "encode_table_event",
    "table_event_type",
]

TableMode = Literal["solo", "online"]


class TableEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class TableOpened(TableEvent, frozen=True, tag="table_opened"):
    """Someone opened the table.

    Attributes:
        table_id: The table's id.
        mode: `solo` or `online`.
        host: The host's player id.
        seats: Solo: every seat; online: the host alone.
        capacity: 0 in early solo events: as many as `seats`
        stake: Coins each person puts in; 0 = a free table.
        clock: The turn clock of this table's games (None: untimed)
        rated: Its games change the ratings of the people with accounts (false: casual)
    """

    table_id: str
    mode: TableMode
    host: str  # player id
    seats: tuple[SeatInfo, ...]  # solo: every seat; online: the host alone
    capacity: int = 0  # 0 in early solo events: as many as `seats`
    stake: int = 0  # coins each person puts in; 0 = a free table
    clock: ClockSettings | None = None  # the turn clock of this table's games (None: untimed)
    rated: bool = False  # its games change ratings (domain/ratings.py); false: casual


class SeatTaken(TableEvent, frozen=True, tag="seat_taken"):
    """A person or a bee player sat down.

    Attributes:
        player_id: None for a bee player.
        name: The name shown to others.
        kind: `person` or `bee` (a bee player, played by the server).
        level: A bee player's level; None for a person (or an old bee)
    """

    player_id: str | None  # None for a bee player
    name: str
    kind: SeatKind
    level: BeeLevel | None = None  # a bee player's level; None for a person (or an old bee)


class SeatFreed(TableEvent, frozen=True, tag="seat_freed"):
    """A person left the table.

    Attributes:
        player_id: Who left.
    """

    player_id: str


class HostChanged(TableEvent, frozen=True, tag="host_changed"):
    """The table has a new host.

    Attributes:
        host: The new host's player id.
    """

    host: str


class GamePrepared(TableEvent, frozen=True, tag="game_prepared"):
    """The next game at the table has an id and the server's commitment to its deal
    (docs/fairness.md): from now on, people at the table may contribute seeds to it.

    Attributes:
        game_id: The game's id.
        commitment: SHA-256 of the server's secret seed for the game, lowercase hex, published
            before any seed is contributed (docs/fairness.md).
    """

    game_id: str
    commitment: str


class SeedContributed(TableEvent, frozen=True, tag="seed_contributed"):
    """A person's seed (hex) for the prepared game, given in the clear while seeds are open; a
    later one from the same person replaces it (and any commitment). Bee players contribute
    nothing. Others see only that the seat gave one, and its hash, until the game is dealt.

    Attributes:
        game_id: The game's id.
        player_id: Who contributed it.
        seed: The seed, lowercase hex.
    """

    game_id: str
    player_id: str
    seed: str


class SeedCommitted(TableEvent, frozen=True, tag="seed_committed"):
    """A person's commitment to a seed they keep to themselves for now:
    `fairness.seed_commitment(game_id, player_id, seed)` in hex. It replaces their earlier seed
    or commitment; the seed itself is revealed once seeds are closed (docs/fairness.md).

    Attributes:
        game_id: The game's id.
        player_id: Whose seed (a person's player id).
        seed_hash: The seed's commitment hash, lowercase hex.
    """

    game_id: str
    player_id: str
    seed_hash: str


class SeedsClosed(TableEvent, frozen=True, tag="seeds_closed"):
    """The deal was asked for while commitments were unrevealed: no seed or commitment is taken
    from now on, and each committed seat reveals its seed, or is recorded as withheld.

    Attributes:
        game_id: The game's id.
        at: When: the reveal window runs from here.
    """

    game_id: str
    at: datetime | None = None  # when: the reveal window runs from here


class SeedRevealed(TableEvent, frozen=True, tag="seed_revealed"):
    """The seed (hex) behind a person's commitment, given after seeds were closed.

    Attributes:
        seed: The seed, lowercase hex: its hash is the commitment.
        game_id: The game's id.
        player_id: Whose seed (a person's player id).
    """

    game_id: str
    player_id: str
    seed: str


class SeedWithheld(TableEvent, frozen=True, tag="seed_withheld"):
    """The reveal window ended without this person's seed: their seat deals with none.

    Attributes:
        game_id: The game's id.
        player_id: Whose seed (a person's player id).
    """

    game_id: str
    player_id: str


class GameOpened(TableEvent, frozen=True, tag="game_opened"):
    """A game was dealt at the table with the people (and bees) seated then.

    Attributes:
        game_id: The game's id.
        number: 1 for the first game at the table.
        follows: The game this one was dealt after (Play again): whoever watched that game
            follows to this one. None for a table's first game, and in events written before
            0.12.0.
    """

    game_id: str
    number: int  # 1 for the first game at the table
    follows: str | None = None  # the game before it at the table: its spectators come along


class Stake(msgspec.Struct, frozen=True, kw_only=True):
    """Coins put in or paid out, for one player.

    Attributes:
        player_id: Whose coins (a person's player id).
        amount: Coins.
    """

    player_id: str
    amount: int


class BuyInHeld(TableEvent, frozen=True, tag="buy_in_held"):
    """A person sat down at a buy-in table before its first game with their stake held in
    their wallet (`stake_held` there, by the same `hold_id`): the table counts it towards the
    pot. The wallet holds first, so a person who cannot pay never takes the seat.

    Attributes:
        player_id: Whose stake.
        hold_id: The hold in their wallet (its `stake_held` names the same id).
        amount: The stake, in coins: the table's buy-in.
    """

    player_id: str
    hold_id: str
    amount: int


class BuyInReturned(TableEvent, frozen=True, tag="buy_in_returned"):
    """A held stake the table gives back to its wallet: its person left before the first deal
    (`left`), or the table never took it (`not_taken`: the seat was refused once the stake was
    held, or the sit-down never finished and the hold expired). The wallet's `stake_released`
    follows, delivered from the table's outbox.

    Attributes:
        player_id: Whose stake.
        hold_id: The hold in their wallet that is released.
        amount: The stake, in coins.
        reason: `left` (they left before the first deal) or `not_taken` (the table never seated them
            with it).
    """

    player_id: str
    hold_id: str
    amount: int
    reason: Literal["left", "not_taken"]


class PotFormed(TableEvent, frozen=True, tag="pot_formed"):
    """At the first deal of a buy-in table every person's held stake goes into the pot (each
    wallet's `stake_committed` follows, delivered from the table's outbox).

    Attributes:
        game_id: The game's id.
        stakes: What each person put into the pot.
    """

    game_id: str
    stakes: tuple[Stake, ...]


class PotSettled(TableEvent, frozen=True, tag="pot_settled"):
    """The pot paid out: to the winners (the fewest stings among those still counting, ties
    split it), or back to every payer when the game was abandoned (each wallet's `pot_paid`
    follows, delivered from the table's outbox).

    Attributes:
        game_id: The game's id.
        payouts: What each player got.
        reason: `won` (to the winners) or `refund` (the game was abandoned).
    """

    game_id: str
    payouts: tuple[Stake, ...]
    reason: Literal["won", "refund"]


class GameFinished(TableEvent, frozen=True, tag="game_finished"):
    """The table's current game ended.

    Attributes:
        game_id: The game's id.
        reason: How the game ended.
    """

    game_id: str
    reason: EndReason = "finished"


class TableClosedEvent(TableEvent, frozen=True, tag="table_closed"):
    """Nobody is left: the table leaves the lobby for good."""


TableEventUnion = (
    TableOpened
    | SeatTaken
    | BuyInHeld
    | BuyInReturned
    | SeatFreed
    | HostChanged
    | GamePrepared
    | SeedContributed
    | SeedCommitted
    | SeedsClosed
    | SeedRevealed
    | SeedWithheld
    | GameOpened
    | PotFormed
    | PotSettled
    | GameFinished
    | TableClosedEvent
)


# --- encoding --------------------------------------------------------------------------------

_codec: TaggedCodec[TableEventUnion] = TaggedCodec(TableEventUnion)


def encode_table_event(event: TableEvent) -> bytes:
    return _codec.encode(event)


def decode_table_event(data: bytes | str) -> TableEventUnion:
    return _codec.decode(data)


def table_event_type(event: TableEvent) -> str:
    return tag_of(event)
