"""The `swarm-game-export/1` document, and the audit's first step: does it decode?

    {"format": "swarm-game-export/1", "game_id": …, "table_id": …,
     "events": [{"version", "type", "recorded_at", "hash", "data", "chain", "metadata"}, …],
     "fairness": {"scheme", "commitment", "client_seeds", "transcript", "fingerprint",
                  "server_seed", "deck_order", "hands", "stems"},
     "table": {"prev_hash", "events": [...]}}                                  # optional

`chain` and `metadata` (added with the hash chain v2, so optional: an event without them is
chained under v1, which covers neither) say which version of the chain the event's stream is
hashed under and what the event's metadata was (who acted, by which command); v2 covers both,
and `recorded_at`.

`table` (added later, so optional: older exports leave it out and stay readable under the same
format string) is the table stream's events for this game, from its `game_prepared` to its
`game_opened`, with the hashes of stream `table-<table_id>`; `prev_hash` is the hash of the table
event just before the first one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

import msgspec

from service.domain.audit.report import Failed
from service.domain.chain import CHAIN_V1, ChainLink, seal_key
from service.domain.rules.events import Event
from service.domain.table_events import TableEventUnion

FORMAT = "swarm-game-export/1"

_HEX = re.compile(r"(?:[0-9a-f]{2})*")
_HASH_HEX = re.compile(r"[0-9a-f]{64}")


class ExportedEvent(msgspec.Struct, frozen=True):
    """One stored event as exported: `data` is the event exactly as stored (with its type tag);
    `chain` the version of the hash chain its stream is hashed under (docs/fairness.md);
    `metadata` who acted and by which command (v2 covers it).

    Attributes:
        version: Its position in the game's log, from 1.
        type: The event's type.
        recorded_at: When it was recorded (UTC).
        hash: Its hash-chain link, lowercase hex.
        data: The event exactly as stored, with its `type` tag.
    """

    version: int
    type: str
    recorded_at: datetime
    hash: str
    data: dict[str, Any]
    chain: Annotated[
        int,
        msgspec.Meta(
            ge=1,
            le=2,
            description="The version of the hash chain its stream is hashed under "
            "(docs/fairness.md): 2 for every stream begun since chain v2; 1 (the default, for "
            "exports made before it) hashes the data open and covers neither time nor metadata.",
        ),
    ] = CHAIN_V1
    metadata: Annotated[
        dict[str, Any] | None,
        msgspec.Meta(
            description="Who acted (`actor`) and by which command (`command_id`, `causation`): "
            "chain v2 covers it (sealed in a game's stream until the game ends); null under v1."
        ),
    ] = None

    def link(self, stream: str) -> ChainLink:
        """This event as the hash chain sees it, in ``stream``."""
        return ChainLink(
            stream=stream,
            version=self.version,
            type=self.type,
            data=self.data,
            hash=bytes.fromhex(self.hash),
            chain=self.chain,
            metadata=self.metadata,
            recorded_at=self.recorded_at,
        )


class FairnessRecord(msgspec.Struct, frozen=True):
    """The published deal (docs/fairness.md); byte strings in lowercase hex, None = no seed.

    Attributes:
        scheme: The version of the fair-deal scheme (docs/fairness.md).
        commitment: SHA-256 of the server's secret seed for the game, lowercase hex, published
            before any seed is contributed (docs/fairness.md).
        client_seeds: Each seat's seed in seat order, null for none.
        transcript: SHA-256 of what the deck is drawn from, lowercase hex.
        fingerprint: SHA-256 of the deal, lowercase hex.
        server_seed: The server's secret seed, lowercase hex.
        deck_order: The deck in the order it was dealt.
        hands: Each seat's hand as dealt, seat 1 first.
        stems: The 4 bees that started the stems.
    """

    scheme: int
    commitment: str
    client_seeds: tuple[str | None, ...]
    transcript: str
    fingerprint: str
    server_seed: str
    deck_order: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...]
    stems: tuple[int, ...]


class TableRecord(msgspec.Struct, frozen=True):
    """The table's events for this game, `game_prepared` first and `game_opened` last, chained
    in stream `table-<table_id>` from `prev_hash` (the hash of the event before the first one,
    64 zeros when the first is version 1).

    Attributes:
        prev_hash: The hash of the table event before the first one here (64 zeros when the first is
            version 1).
        events: The table's events for this game, `game_prepared` first, `game_opened` last.
    """

    prev_hash: str
    events: tuple[ExportedEvent, ...]


class GameExport(msgspec.Struct, frozen=True):
    """A whole ended game, for anyone to audit offline (docs/fairness.md).

    Attributes:
        format: The export format's name and version.
        game_id: The game's id.
        table_id: The table's id.
        events: Every event of the game, in order, each with its hash-chain link.
        fairness: The published deal.
        table: The table's events for this game with their chain links; null in exports made before
            they were included.
    """

    format: str
    game_id: str
    table_id: str
    events: tuple[ExportedEvent, ...]
    fairness: FairnessRecord
    table: TableRecord | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """A game event as exported, and as decoded."""

    record: ExportedEvent
    event: Event

    @property
    def version(self) -> int:
        return self.record.version


@dataclass(frozen=True, slots=True)
class TableRow:
    record: ExportedEvent
    event: TableEventUnion

    @property
    def version(self) -> int:
        return self.record.version


@dataclass(frozen=True, slots=True)
class Decoded:
    """The export as the later steps read it."""

    export: GameExport
    rows: tuple[Row, ...]
    table_rows: tuple[TableRow, ...] | None  # None: the export carries no table events

    @property
    def seal_keys(self) -> dict[str, bytes]:
        """The game's seal key (chain v2), from the server seed the export publishes: it opens
        every value the chain hid during the game, this game's seeds on the table included."""
        game_id = self.export.game_id
        return {game_id: seal_key(game_id, bytes.fromhex(self.export.fairness.server_seed))}


def check_format(document: object) -> tuple[str, Decoded]:
    """Step 1: the document decodes, and every event's data is an event of its type."""
    if not isinstance(document, Mapping):
        raise Failed(f"the export is a JSON {type(document).__name__}, not an object")
    declared = document.get("format")
    if declared != FORMAT:
        raise Failed(f"unknown format {declared!r}: this auditor reads {FORMAT!r}")
    try:
        export = msgspec.convert(document, GameExport)
    except msgspec.ValidationError as error:
        raise Failed(f"not a {FORMAT} document: {error}") from None
    record = export.fairness
    for name in ("commitment", "transcript", "fingerprint", "server_seed"):
        if not _HEX.fullmatch(getattr(record, name)):
            raise Failed(f"fairness.{name} is not lowercase hex")
    for seat, seed in enumerate(record.client_seeds, start=1):
        if seed is not None and not _HEX.fullmatch(seed):
            raise Failed(f"fairness.client_seeds: seat {seat}'s seed is not lowercase hex")
    if not export.events:
        raise Failed("the export has no events")
    rows = tuple(Row(r, _decode(r, Event, "")) for r in export.events)
    table_rows = None
    if export.table is not None:
        if not _HASH_HEX.fullmatch(export.table.prev_hash):
            raise Failed("table.prev_hash is not 64 lowercase hex digits")
        table_rows = tuple(
            TableRow(r, _decode(r, TableEventUnion, "table ")) for r in export.table.events
        )
    tables = "" if table_rows is None else f" and {len(table_rows)} table events"
    return f"{FORMAT}, {len(rows)} events{tables}", Decoded(export, rows, table_rows)


def _decode(record: ExportedEvent, kind: Any, stream: str) -> Any:
    """The event in `record`; a game event's failure names its version, a table event's says
    "table event vN" (the report's versions are the game stream's)."""
    where: int | None = record.version
    prefix = ""
    if stream:
        prefix, where = f"table event v{record.version}: ", None
    if not _HASH_HEX.fullmatch(record.hash):
        raise Failed(f"{prefix}the event's hash is not 64 lowercase hex digits", where)
    tag = record.data.get("type")
    if tag != record.type:
        raise Failed(f"{prefix}an event of type {record.type!r} holds data of type {tag!r}", where)
    try:
        return msgspec.convert(record.data, kind)
    except msgspec.ValidationError as error:
        raise Failed(
            f"{prefix}the {record.type} data is not a valid event: {error}", where
        ) from None
