"""The move bodies of submitMove (tap, confirm, take_stem), strictly decoded as a tagged
union, and the command they become for the play use case (`service.usecases.play.PersonMove`).

A move's `digest` is the SHA-256 of its canonical JSON (the decoded struct, re-encoded, so key
order and spacing do not matter): the play use case stores it with the events the move wrote,
and a later move with the same `move_id` and another digest is refused (`move-id-reused`)."""

from __future__ import annotations

import hashlib
from typing import Annotated

import msgspec

from service.usecases.play import PersonMove


class Move(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True):
    """A move by the caller's own seat. `move_id` is chosen by the client: sending the same move
    again returns the same result and writes nothing.

    Attributes:
        move_id: Your id for this move, 1 to 64 characters, unique per player per game (a UUID is a
            good choice): the move's idempotency key. The same move sent again with the same
            `move_id` is applied once and answered the same, with `Idempotent-Replayed: true`; a
            different move with it is refused (`move-id-reused`).
    """

    move_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern="^[^\\u0000]*$")]


# The bounds every game has (seed §1: bees 1 to 84 at most, 4 stems), so the document states
# them. A bee outside them is malformed (400) before any rule looks at it; a stem outside them
# is the rules' own 422 `stem-out-of-range` (docs/rules.md), one answer for every such stem.
BeeNumber = Annotated[int, msgspec.Meta(ge=1, le=84)]
StemNumber = Annotated[
    int,
    msgspec.Meta(
        extra_json_schema={"minimum": 1, "maximum": 4},
        description="1 to 4; another number is refused with 422 `stem-out-of-range`",
    ),
]


class Tap(Move, frozen=True, tag="tap"):
    """Tap a bee: your saved, changeable choice for this turn (hidden from others). When the turn
    clock runs out, the tapped bee flies.

    Attributes:
        bee: The bee from your hand.
    """

    bee: BeeNumber


class Confirm(Move, frozen=True, tag="confirm"):
    """Confirm your pick for this turn (final). Without `bee`, the bee you tapped.

    Attributes:
        bee: The bee from your hand; leave it out to confirm the one you tapped.
    """

    bee: BeeNumber | None = None


class ChooseStem(Move, frozen=True, tag="take_stem"):
    """Your bee is too low: take every bee of this stem (and their stings); your bee starts it
    again.

    Attributes:
        stem: The stem to take, 1 to 4.
    """

    stem: StemNumber


AnyMove = Tap | Confirm | ChooseStem


_MOVE_ENCODER = msgspec.json.Encoder()


def move_digest(move: AnyMove) -> str:
    """The fingerprint of a move's body: its canonical JSON, hashed."""
    return hashlib.sha256(_MOVE_ENCODER.encode(move)).hexdigest()


def person_move(move: AnyMove) -> PersonMove:
    """The body as the play use case's command."""
    match move:
        case Tap():
            return PersonMove(
                move_id=move.move_id, kind="tap", digest=move_digest(move), bee=move.bee
            )
        case Confirm():
            return PersonMove(
                move_id=move.move_id, kind="confirm", digest=move_digest(move), bee=move.bee
            )
        case ChooseStem():
            return PersonMove(
                move_id=move.move_id, kind="take_stem", digest=move_digest(move), stem=move.stem
            )
    raise AssertionError(f"unknown move {move!r}")  # pragma: no cover
