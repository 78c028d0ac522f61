"""Seeds that give nobody an edge: commit by hash, reveal once every seat has committed.

The rules (docs/fairness.md, "Seeds: commit, then reveal"), pure like the rest of the table:
while seeds are open a seated person gives a seed in the clear (`decide_contribute`, in
tables.py) or commits to one by its hash (`decide_commit_seed`); when the deal is asked for and
a commitment is unrevealed, seeds close (`decide_close_seeds`) and the deal waits for each
committed seed (`decide_reveal`), until the service's reveal window ends (`decide_withhold`: the
seat deals with none). Nobody sees another person's seed before the deal (`seen_by`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec

from service.domain import fairness
from service.domain.rules.errors import IllegalMove, InvalidMove
from service.domain.table_events import (
    SeedCommitted,
    SeedContributed,
    SeedRevealed,
    SeedsClosed,
    SeedWithheld,
    TableEventUnion,
)
from service.domain.tables import SeedsAreClosed, TableState, seeding


class NothingToReveal(IllegalMove):
    code = "nothing-to-reveal"
    title = "You have no committed seed to reveal"


class SeedsStillOpen(IllegalMove):
    code = "seeds-still-open"
    title = "Seeds are revealed once every seat has committed"


class SeedDoesNotMatch(InvalidMove):
    code = "seed-does-not-match"
    title = "This seed is not the one you committed to"


def decide_commit_seed(state: TableState, player_id: str, seed_hash: str) -> list[TableEventUnion]:
    """A seated person's commitment to a seed they reveal after every seat has committed."""
    game_id = seeding(state, player_id)
    if state.seeds_closed:
        raise SeedsAreClosed("Seeds are closed: the deal waits for the committed ones.")
    return [SeedCommitted(game_id=game_id, player_id=player_id, seed_hash=seed_hash)]


def decide_close_seeds(state: TableState, at: datetime | None = None) -> list[TableEventUnion]:
    """When the deal is asked for (start, fill, a full table, play again): if any commitment is
    unrevealed, close seeds (at `at`) so the deal waits for reveals; otherwise nothing."""
    if state.next_game is None or state.seeds_closed or state.ready_to_deal:
        return []
    return [SeedsClosed(game_id=state.next_game, at=at)]


REVEAL_WINDOW = timedelta(seconds=30)


def reveal_window_over(state: TableState, now: datetime, window: timedelta = REVEAL_WINDOW) -> bool:
    """Seeds closed at least `window` ago: whoever still owes a seed may be recorded withheld
    (the service does so when the deal is asked for again)."""
    closed = state.seeds_closed_at
    return state.seeds_closed and closed is not None and now >= closed + window


def decide_reveal(state: TableState, player_id: str, seed: str) -> list[TableEventUnion]:
    """The seed behind a person's commitment, once seeds are closed; it must hash to it."""
    game_id = seeding(state, player_id)
    committed = state.seed_hash_of(player_id)
    if committed is None:
        raise NothingToReveal("You have no committed seed waiting to be revealed.")
    if not state.seeds_closed:
        raise SeedsStillOpen("Reveal your seed once the deal is asked for.")
    try:
        got = fairness.seed_commitment(game_id, player_id, bytes.fromhex(seed)).hex()
    except ValueError as error:
        raise SeedDoesNotMatch(str(error)) from None
    if got != committed:
        raise SeedDoesNotMatch(f"Its commitment is {got}, you committed to {committed}.")
    return [SeedRevealed(game_id=game_id, player_id=player_id, seed=seed)]


def decide_withhold(state: TableState) -> list[TableEventUnion]:
    """The reveal window ended: every seat still owing its seed deals with none."""
    if state.next_game is None or not state.seeds_closed:
        return []
    game = state.next_game
    return [SeedWithheld(game_id=game, player_id=who) for who in state.awaiting_reveals]


class _HiddenSeed(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    game_id: str
    player_id: str
    seed: None = None  # hidden until the game it seeds is dealt
    seed_hash: str  # fairness.seed_commitment(game_id, player_id, seed), hex


class SeedShown(_HiddenSeed, frozen=True, tag="seed_contributed"):
    """A `seed_contributed` as someone else sees it before the deal: that the seat gave a seed,
    and its hash, never the seed itself."""


class RevealShown(_HiddenSeed, frozen=True, tag="seed_revealed"):
    """A `seed_revealed` as someone else sees it before the deal (its hash is the commitment)."""


def seen_by(
    event: TableEventUnion, viewer: str | None, state: TableState
) -> TableEventUnion | SeedShown | RevealShown:
    """A table event as `viewer` may see it now: another person's seed stays hidden (only its
    hash shows) until the game it seeds has been dealt; then it is in the game's proof too."""
    if (
        isinstance(event, SeedContributed | SeedRevealed)
        and event.player_id != viewer
        and event.game_id not in state.games
    ):
        digest = fairness.seed_commitment(event.game_id, event.player_id, bytes.fromhex(event.seed))
        kind = RevealShown if isinstance(event, SeedRevealed) else SeedShown
        return kind(game_id=event.game_id, player_id=event.player_id, seed_hash=digest.hex())
    return event
