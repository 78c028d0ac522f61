"""The events of a log as a client receives them (an events page, a stream message, the event
of a replayed state): each in an envelope, `{version, type, recorded_at, hash, data}`, one
struct per event type, tagged by `type`, so the API document gives a client a type for each.

The envelopes are derived from the event types: one for each type of the domain's visible
unions (`service.domain.views.VisibleEventData`, `VisibleTableEventData`), whose `data` is the
type's visible form (the redacted one where the rules hide something, else the event itself).
A new event type gets its envelope, its place in the union and its `type` tag with nothing
written here but what a client sees of it (`SHOWN`, which must cover every type) and the
stings shown beside its bees (`BESIDE`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Union, get_args

import msgspec

from service.domain.rules.cards import stings
from service.domain.rules.events import BeeLanded, Event, PicksRevealed, StemTaken
from service.domain.table_events import TableEventUnion
from service.domain.views import VisibleEventData, VisibleTableEventData
from service.usecases.streams import LogItem


class _LogEntry(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """One event of a log, as a client receives it in an events page or a stream message.

    Attributes:
        version: Its position in the stream's log, from 1; pass the last one you have as
            `after` (or `Last-Event-ID`) to continue after it.
        recorded_at: When it was recorded (UTC).
        hash: Its hash-chain link (docs/fairness.md), lowercase hex; empty for events written
            before the chain existed, and, until the game ends, for a game still hashed under
            chain v1 (begun before 0.4.0).
        data: The event itself, as the caller may see it; its fields depend on `type`.
    """

    version: int
    recorded_at: datetime
    hash: str = ""


class _GameLogEntry(_LogEntry, frozen=True):
    pass


class _TableLogEntry(_LogEntry, frozen=True):
    pass


# What a client sees of each event type: its envelope's description (the stings beside it are
# described here too, as the envelope's own fields).
SHOWN: dict[str, str] = {
    "deal_committed": (
        "The server's commitment to the game's secret seed, before anyone contributes a seed\n"
        "(docs/fairness.md). Hides nothing."
    ),
    "game_started": (
        "The deal. Until the game ends, `data.hands` holds only the viewer's own hand; every\n"
        "other seat's (every seat's, for a spectator) is null."
    ),
    "turn_started": (
        "A turn began; `data.deadline` is when its clock runs out (online games). Hides\nnothing."
    ),
    "bee_tapped": (
        "A seat tapped a bee. Until the game ends, `data.bee` is null unless the seat is the\n"
        "viewer's own."
    ),
    "pick_confirmed": (
        "A seat's pick is final. Until the game ends, `data.bee` and `data.by_clock` are null\n"
        "unless the seat is the viewer's own."
    ),
    "picks_revealed": (
        "Everyone is in: every pick, lowest first (the order they fly in). Hides nothing.\n"
        "\n"
        "Attributes:\n"
        "    stings: The stings of each pick's bee, index by index with `data.picks` (beside the\n"
        "        event, not in it: `data` is the recorded event its `hash` chains)."
    ),
    "bee_landed": (
        "A bee landed on a stem; `data.taken` holds the 5 it took when it was the sixth. Hides\n"
        "nothing.\n"
        "\n"
        "Attributes:\n"
        "    bee_stings: The stings `data.bee` carries.\n"
        "    taken_stings: The stings of each bee of `data.taken`, index by index (their sum is\n"
        "        what the seat took)."
    ),
    "stem_choice_required": (
        "A person's bee is too low for every stem: the game waits for them to choose. Hides\n"
        "nothing."
    ),
    "stem_taken": (
        "A too-low bee took every bee of a stem and starts it again alone. Hides nothing.\n"
        "\n"
        "Attributes:\n"
        "    bee_stings: The stings `data.bee` carries.\n"
        "    taken_stings: The stings of each bee of `data.taken`, index by index (their sum is\n"
        "        what the seat took)."
    ),
    "seat_left": ("A person left mid-game. Hides nothing."),
    "game_ended": (
        "The game is over: final stings by seat (index 0 is seat 1) and the winners. From here\n"
        "on every event is shown whole."
    ),
    "deal_revealed": (
        "After the game: the secret seed and the deck order, to check the deal\n"
        "(docs/fairness.md). The last event of a game."
    ),
    "table_opened": ("Someone opened the table (solo: with every seat filled)."),
    "seat_taken": ("A person or a bee player sat down."),
    "buy_in_held": (
        "A person who sat down before the first game of a buy-in table has their stake held for\n"
        "the pot (held in their wallet first, by the same `hold_id`)."
    ),
    "buy_in_returned": (
        "A held stake went back to its wallet: its person left before the first deal, or the\n"
        "table never took it (the seat was refused, or the sit-down never finished)."
    ),
    "seat_freed": ("A person left the table."),
    "host_changed": ("The host left; the next person in seat order hosts now."),
    "game_prepared": (
        "The next game has an id and the server's commitment: seeds may be contributed to it."
    ),
    "seed_contributed": (
        "A person contributed a seed to the prepared game. Until that game is dealt, another\n"
        "person's `data.seed` is null (its `seed_hash` shows that one was given)."
    ),
    "seed_committed": ("A person committed to a seed by its hash, to reveal it once seeds close."),
    "seeds_closed": ("No more seeds for the prepared game: those committed must now be revealed."),
    "seed_revealed": (
        "A person revealed the seed they committed to. Until the game is dealt, another\n"
        "person's `data.seed` is null (its `seed_hash` is the commitment)."
    ),
    "seed_withheld": (
        "A committed seed was not revealed in time: that seat's seed counts as none."
    ),
    "game_opened": (
        "A game was dealt at the table: follow it with `data.game_id`. After Play again,\n"
        "`data.follows` is the game before it: a spectator of that game follows to this one."
    ),
    "pot_formed": ("At the first deal of a buy-in table, every stake went into the pot."),
    "pot_settled": ("The pot was paid out to the winners, or back to every payer."),
    "game_finished": ("The table's current game ended."),
    "table_closed": ("Nobody is left: the table is closed. The last event of a table."),
}

_STINGS = tuple[int, ...]
# The stings of the bees an event shows, beside it (not in `data`, which is the recorded event
# its `hash` chains), so a client never works them out (issue 25): each field, and its value.
BESIDE: dict[type, tuple[tuple[str, Any, Any], ...]] = {
    PicksRevealed: (("stings", _STINGS, ()),),
    BeeLanded: (("bee_stings", int, 0), ("taken_stings", _STINGS, ())),
    StemTaken: (("bee_stings", int, 0), ("taken_stings", _STINGS, ())),
}


def _beside(data: Any) -> dict[str, Any]:
    match data:
        case PicksRevealed():
            return {"stings": tuple(stings(p.bee) for p in data.picks)}
        case BeeLanded() | StemTaken():
            return {
                "bee_stings": stings(data.bee),
                "taken_stings": tuple(stings(b) for b in data.taken),
            }
        case _:
            return {}


def _derive(visible: Any, stored: Any, base: type[_LogEntry]) -> dict[str, type[_LogEntry]]:
    """One envelope per event type of `visible`, by tag, in the stored union's order; `data` is
    the type's visible form (a member of `visible` outside `stored`), else the event."""
    forms: dict[str, Any] = {}
    for member in get_args(visible):
        tag = member.__struct_config__.tag
        if tag not in forms or member not in get_args(stored):
            forms[tag] = member
    entries: dict[str, type[_LogEntry]] = {}
    for tag, data in forms.items():
        name = "".join(part.title() for part in tag.split("_")) + "Entry"
        extra = [(field, kind, default) for field, kind, default in BESIDE.get(data, ())]
        entries[tag] = msgspec.defstruct(  # type: ignore[assignment]
            name,
            [("data", data), *extra],
            bases=(base,),
            tag=tag,
            frozen=True,
            kw_only=True,
            module=__name__,
            namespace={"__doc__": SHOWN[tag]},
        )
    return entries


GAME_ENTRIES = _derive(VisibleEventData, Event, _GameLogEntry)
TABLE_ENTRIES = _derive(VisibleTableEventData, TableEventUnion, _TableLogEntry)
_ENTRIES = {**GAME_ENTRIES, **TABLE_ENTRIES}
assert len(_ENTRIES) == len(GAME_ENTRIES) + len(TABLE_ENTRIES), "a tag in both logs"

if TYPE_CHECKING:
    VisibleEvent = _GameLogEntry
    TableLogEntry = _TableLogEntry
else:
    VisibleEvent = Union[tuple(GAME_ENTRIES.values())]  # noqa: UP007
    """An event of a game's log as one viewer may see it, tagged by `type`."""
    TableLogEntry = Union[tuple(TABLE_ENTRIES.values())]  # noqa: UP007
    """An event of a table's log, tagged by `type`; another person's seed is hidden until its
    game is dealt."""
AnyLogEntry = _LogEntry


def entry(item: LogItem) -> _LogEntry:
    """A log item in its envelope."""
    made: _LogEntry = _ENTRIES[str(item.data.__struct_config__.tag)](  # type: ignore[call-arg]
        version=item.version,
        recorded_at=item.recorded_at,
        hash=item.hash,
        data=item.data,
        **_beside(item.data),
    )
    return made


def entries(items: Sequence[LogItem]) -> list[Any]:
    return [entry(item) for item in items]


def entry_type(entry: _LogEntry) -> str:
    """The `type` tag of a log entry (the SSE `event:` field)."""
    return str(type(entry).__struct_config__.tag)
