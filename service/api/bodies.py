"""What the HTTP operations take and answer that is not a view of the use cases: request bodies
(strictly decoded, unknown fields refused) and small answers (pages, tickets, verdicts)."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Annotated

import msgspec
from litestar.datastructures import CacheControlHeader

from service.api.envelopes import VisibleEvent
from service.domain.names import NAME_MAX, TOOL_PATTERN
from service.domain.rules.events import BeeLevel
from service.domain.rules.levels import DEFAULT_LEVEL, levels_described

# Patterns are searched (re.search), and Python's `$` also matches before a final newline:
# every pattern is anchored with `^...$(?!\n)`, a whole-string match in Python and ECMAScript.
# A name's rule is exact on the server (service/domain/names.py: 422 `invalid-name`); the
# document's pattern is a short superset every tool reads alike (`names.TOOL_PATTERN`: why the
# exact rule cannot be one), its `format` names the rule, and its description states it. The
# document shows it once, as the `Name` schema.
NAME_FORMAT = "swarm-name"
Name = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=NAME_MAX,
        extra_json_schema={"pattern": TOOL_PATTERN, "format": NAME_FORMAT},
        description="1 to 40 characters: words of visible characters (letters, digits, "
        "punctuation, symbols, by Unicode category) with at most 3 combining marks on each, "
        "and spaces; shown NFKC-normalised with runs of spaces made one. Refused: a control, "
        "format (zero-width, bidi), private-use, surrogate, unassigned (Unicode "
        f"{unicodedata.unidata_version}), line or paragraph separator or invisible character "
        "(the Hangul fillers, the braille blank, variation selectors), a mark with no "
        "character before it, more than 3 marks on one character, a character whose NFKC "
        "form is another kind or more than one character, and a name with no visible "
        "character. The `pattern` is a superset of this rule that every regular-expression "
        "engine reads alike (with or without ECMAScript's `u` flag): it refuses the controls, "
        "format and private-use characters below U+10000 and a name of spaces only; the "
        "server holds a name to the whole rule (`format` `swarm-name`). Empty or over 40 "
        "characters as sent: 400 `bad-request`, as any schema bound; refused by the rule (or "
        "over 40 after NFKC): 422 `invalid-name`",
    ),
]
# Every string the API reads is text: no NUL (refused before decoding, service/api/limits.py,
# as are lone surrogates, which are not Unicode text at all; a negated class with the surrogate
# range made Hypothesis generate NULs, so the pattern states the NUL alone).
TEXT_PATTERN = "^[^\\u0000]*$"
# Answers that hold a credential (a bearer token, a stream ticket): never stored by a cache.
NO_STORE = CacheControlHeader(no_store=True)

PlayerCount = Annotated[int, msgspec.Meta(ge=2, le=8)]


class GuestIn(msgspec.Struct, forbid_unknown_fields=True):
    """A new guest.

    Attributes:
        name: The name shown to others.
    """

    name: Name


class GuestOut(msgspec.Struct):
    """A new guest and its bearer token.

    Attributes:
        player_id: Your player id.
        name: Your name.
        token: Send as `Authorization: Bearer <token>`
        expires_at: When the token stops working (UTC, 30 days on): register before then to keep the
            guest.
    """

    player_id: str
    name: str
    token: str  # send as `Authorization: Bearer <token>`
    # when the token stops working (UTC, 30 days on): register before then to keep the guest
    expires_at: datetime


LevelIn = Annotated[
    BeeLevel,
    msgspec.Meta(
        description=(  # from the levels' registry (service/domain/rules/levels.py)
            f"How the bee players choose their bees: {levels_described()}."
            " Each bee seat's level is shown in the table and game views and in the lobby."
        )
    ),
]


class SoloTableIn(msgspec.Struct, forbid_unknown_fields=True):
    """A solo table against bee players.

    Attributes:
        players: Players at the table, you included: 2 to 8 (4 by default).
        deal: False: the table opens with its next game's commitment, and deals when you start it
            (startGame, with your client_seed if you give one); true: the first game is dealt at
            once.
    """

    players: PlayerCount = 4
    # false: the table opens with its next game's commitment, and deals when you start it
    # (startGame, with your client_seed if you give one); true: the first game is dealt at once
    deal: bool = True
    level: LevelIn = DEFAULT_LEVEL


class TableIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A new online table.

    Attributes:
        seats: Seats at the table: 2 to 8 (4 by default).
        stake: Coins each person puts in (an account is needed); 0, the default, for a free table.
        turn_seconds: Seconds to pick each turn (20 by default).
        choice_seconds: Seconds to choose a stem when too low (10 by default).
        rated: True: its games change the ratings of the people with accounts who play them
            (bees and guests are not rated); false, the default: a casual table.
    """

    seats: PlayerCount = 4
    stake: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 0  # 0 = a free table
    turn_seconds: Annotated[float, msgspec.Meta(ge=1, le=600)] = 20.0
    choice_seconds: Annotated[float, msgspec.Meta(ge=1, le=600)] = 10.0
    rated: bool = False


class PlayNowIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The kind of online table to be seated at now.

    Attributes:
        seats: Seats at the table: 2 to 8 (4 by default).
        rated: A rated table (false, the default: casual).
        stake: Coins each person puts in (an account is needed); 0, the default, for a free
            table.
    """

    seats: PlayerCount = 4
    rated: bool = False
    stake: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 0


HASH_PATTERN = "^[0-9a-f]{64}$"
# A hash chain head a player recorded: the event's version (from 1), a colon, its hash.
HeadText = Annotated[str, msgspec.Meta(pattern=r"^[1-9][0-9]{0,9}:[0-9a-f]{64}$")]

SeedHex = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^(?:[0-9a-f]{2}){0,64}$(?!\n)",
        description="Your seed for the next game: 0 to 64 bytes, lowercase hex",
    ),
]


class SeedIn(msgspec.Struct, forbid_unknown_fields=True):
    """A seed for the table's next game (docs/fairness.md): it goes into the transcript that
    the deck is drawn from, after the server's commitment was published.

    Attributes:
        client_seed: Your seed for the next game: 0 to 64 bytes, lowercase hex.
    """

    client_seed: SeedHex


class SeedCommitmentIn(msgspec.Struct, forbid_unknown_fields=True):
    """`seed_hash` = SHA-256(encode("swarm/seed/v1", game_id, your player_id, seed)), hex.

    Attributes:
        seed_hash: SHA-256(encode("swarm/seed/v1", game_id, your player_id, seed)), lowercase hex:
            your seed's commitment.
    """

    seed_hash: Annotated[str, msgspec.Meta(pattern=HASH_PATTERN)]


class OptionalSeedIn(msgspec.Struct, forbid_unknown_fields=True):
    """An optional body: `{}` or no body gives no seed.

    Attributes:
        client_seed: Your seed for the next game: 0 to 64 bytes, lowercase hex.
    """

    client_seed: SeedHex | None = None


class FillWithBeesIn(msgspec.Struct, forbid_unknown_fields=True):
    """An optional body: your seed for the game the bees start, and the bees' level.

    Attributes:
        client_seed: Your seed for the game the bees start: 0 to 64 bytes, lowercase hex.
    """

    client_seed: SeedHex | None = None
    level: LevelIn = DEFAULT_LEVEL


def client_seed_of(data: OptionalSeedIn | FillWithBeesIn | None) -> str | None:
    return data.client_seed if data is not None else None


class EventPage(msgspec.Struct):
    """A page of a game's log, as the caller may see it.

    Attributes:
        events: The events after `after`, oldest first, each typed by `type`.
        game_version: The game's log so far; ask again with `after` set to the last version
            you have.
    """

    events: list[VisibleEvent]
    game_version: int


class StreamTicketOut(msgspec.Struct, kw_only=True):
    """A short-lived ticket that opens one stream without the bearer token in its URL.

    Attributes:
        ticket: Send it as `?ticket=` on the stream's URL (an `EventSource` cannot send an
            `Authorization` header). Usable, for reconnects, until `expires_at`.
        expires_at: After it, ask for a new ticket; a stream already open stays open.
        stream_url: The stream's path with the ticket, ready for `new EventSource(...)`.
    """

    ticket: str
    expires_at: datetime
    stream_url: str


class VerificationCheck(msgspec.Struct):
    """One check of the fairness step.

    Attributes:
        name: The check.
        status: Ok, failed or skipped (after an earlier failure)
        reason: What was checked, or why it failed.
    """

    name: str
    status: str  # ok, failed or skipped (after an earlier failure)
    reason: str


class VerificationStep(msgspec.Struct):
    """One step of the verification.

    Attributes:
        name: Format, commitment, fairness, chain, replay, result.
        status: Ok, failed or skipped (after an earlier failure)
        reason: What was checked, or why it failed.
        version: The event to blame, when one is.
        checks: The fairness step's own checks (docs/fairness.md)
    """

    name: str  # format, commitment, fairness, chain, replay, result
    status: str  # ok, failed or skipped (after an earlier failure)
    reason: str
    version: int | None  # the event to blame, when one is
    checks: list[VerificationCheck]  # the fairness step's own checks (docs/fairness.md)


class Verification(msgspec.Struct):
    """The server's verification of an ended game, step by step.

    Attributes:
        game_id: The game's id.
        ok: Every step passed.
        steps: The steps in order: format, commitment, fairness, chain, replay, result.
    """

    game_id: str
    ok: bool
    steps: list[VerificationStep]


class Health(msgspec.Struct):
    """The service is up and its database answers.

    Attributes:
        status: `ok`.
        database: `ok` when the database answered.
    """

    status: str
    database: str
