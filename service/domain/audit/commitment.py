"""Step 2, `commitment`: the server bound itself to its seed before anyone gave theirs.

In the game stream: event 1 is `deal_committed`, for this game and table, committing to the
published commitment (and to the one the player recorded, if given), before any turn.

In the table's events (when the export carries them): they chain in stream `table-<table_id>`
from `prev_hash`, start with this game's `game_prepared` (the same commitment) and end with its
`game_opened`, so every seed event between them came after the commitment and before the deal;
seeds follow the commit-reveal rules (a reveal matches its commitment and comes after seeds
closed, nothing is committed or given after); and the seat entries of the proof are exactly the
seeds the seated people gave (`none` for a bee, a person who gave none, or a withheld reveal).
"""

from __future__ import annotations

from collections.abc import Sequence

from service.domain import fairness
from service.domain.audit.expect import Expectations
from service.domain.audit.export import Decoded, Row, TableRow
from service.domain.audit.report import Failed
from service.domain.chain import GENESIS, verify_chain
from service.domain.rules.events import DealCommitted, GameStarted, TurnStarted
from service.domain.table_events import (
    GameOpened,
    GamePrepared,
    SeedCommitted,
    SeedContributed,
    SeedRevealed,
    SeedsClosed,
    SeedWithheld,
)
from service.domain.tables import TableState, evolve_table

_SEED_EVENTS = (SeedContributed, SeedCommitted, SeedsClosed, SeedRevealed, SeedWithheld)


def check_commitment(decoded: Decoded, expect: Expectations) -> str:
    committed = _game_commitment(decoded, expect)
    if decoded.table_rows is None:
        return (
            f"deal_committed is event 1, for this game, committing to {committed}; the export "
            "carries no table events, so the order of commitment and seeds is not shown"
        )
    seeds = _table_order(decoded, expect, decoded.table_rows)
    return (
        f"deal_committed is event 1, for this game, committing to {committed}; the table "
        f"prepared it before any of its {seeds} seed events, and dealt it after them"
    )


def _game_commitment(decoded: Decoded, expect: Expectations) -> str:
    export, rows = decoded.export, decoded.rows
    committed = [(i, row) for i, row in enumerate(rows) if isinstance(row.event, DealCommitted)]
    if not committed:
        raise Failed("no deal_committed event: the server never committed to a seed")
    position, row = committed[0]
    event = row.event
    assert isinstance(event, DealCommitted)
    turn = next((r for r in rows[:position] if isinstance(r.event, TurnStarted)), None)
    if turn is not None:
        raise Failed(
            f"the commitment was published at v{row.version}, after turn 1 started "
            f"(v{turn.version}): it must come before anyone contributes or plays",
            row.version,
        )
    if position != 0 or row.version != 1:
        first = rows[0]
        raise Failed(
            f"the stream starts with {first.record.type} (v{first.version}); a fairly "
            f"dealt game starts with deal_committed (found at v{row.version})",
            row.version,
        )
    if len(committed) > 1:
        raise Failed("a second deal_committed: the commitment changed", committed[1][1].version)
    if event.game_id != export.game_id:
        raise Failed(
            f"the commitment is for game {event.game_id}, not for the exported game "
            f"{export.game_id}",
            row.version,
        )
    if event.table_id != export.table_id:
        raise Failed(
            f"the commitment is for table {event.table_id}, not {export.table_id}", row.version
        )
    if event.scheme != export.fairness.scheme:
        raise Failed(
            f"committed under scheme {event.scheme}, published under {export.fairness.scheme}",
            row.version,
        )
    if event.commitment != export.fairness.commitment:
        raise Failed(
            f"the commitment recorded is {event.commitment}, the fairness record "
            f"publishes {export.fairness.commitment}",
            row.version,
        )
    if expect.commitment is not None and event.commitment != expect.commitment:
        raise Failed(
            f"you recorded the commitment {expect.commitment}, the export commits to "
            f"{event.commitment}",
            row.version,
        )
    return event.commitment


def _table_order(decoded: Decoded, expect: Expectations, rows: Sequence[TableRow]) -> int:
    """Check the table's events for this game; the number of seed events among them."""
    export = decoded.export
    assert export.table is not None
    if not rows:
        raise Failed("the export's table events are empty: no game_prepared")
    stream = f"table-{export.table_id}"
    if rows[0].version == 1 and export.table.prev_hash != GENESIS.hex():
        raise Failed("table event v1 follows nothing: table.prev_hash must be 64 zeros")
    verdict = verify_chain(
        [row.record.link(stream) for row in rows],
        stream=stream,
        anchors={v: bytes.fromhex(h) for v, h in expect.table_heads},
        after=(rows[0].version - 1, bytes.fromhex(export.table.prev_hash)),
        seal_keys=decoded.seal_keys,
    )
    if not verdict.ok:
        raise Failed(f"table event v{verdict.failed_version}: {verdict.reason}: {verdict.detail}")
    first, last = rows[0], rows[-1]
    if not isinstance(first.event, GamePrepared) or first.event.game_id != export.game_id:
        raise Failed(
            f"table event v{first.version} is {first.record.type}: the table's events for a "
            "game start with its game_prepared"
        )
    if first.event.commitment != export.fairness.commitment:
        raise Failed(
            f"table event v{first.version} prepared the game with commitment "
            f"{first.event.commitment}, the export publishes {export.fairness.commitment}"
        )
    if not isinstance(last.event, GameOpened) or last.event.game_id != export.game_id:
        raise Failed(
            f"table event v{last.version} is {last.record.type}: the table's events for a "
            "game end with its game_opened"
        )
    state = TableState()
    seeds = 0
    for row in rows[:-1]:
        seeds += _check_seed_rule(row, state, export.game_id)
        state = evolve_table(state, row.event)
    if state.awaiting_reveals:
        raise Failed(
            f"table event v{last.version}: the game was dealt while "
            f"{', '.join(state.awaiting_reveals)} still owed a committed seed"
        )
    _seats_hold_their_seeds(decoded.rows, state, last.version)
    return seeds


def _check_seed_rule(row: TableRow, state: TableState, game_id: str) -> int:
    """1 if `row` is a seed event that keeps the rules of docs/fairness.md, 0 if not a seed
    event; raises on a broken rule."""
    event, where = row.event, f"table event v{row.version}"
    if isinstance(event, GamePrepared | GameOpened) and state.next_game is not None:
        raise Failed(f"{where}: a second {row.record.type} before this game was dealt")
    if not isinstance(event, _SEED_EVENTS):
        return 0
    if event.game_id != game_id:
        raise Failed(f"{where}: a {row.record.type} for game {event.game_id}, not this one")
    if isinstance(event, SeedContributed | SeedCommitted) and state.seeds_closed:
        raise Failed(f"{where}: a {row.record.type} after seeds were closed")
    if isinstance(event, SeedRevealed | SeedWithheld):
        committed = state.seed_hash_of(event.player_id)
        if not state.seeds_closed or committed is None:
            raise Failed(f"{where}: a {row.record.type} with no closed commitment before it")
        if isinstance(event, SeedRevealed):
            got = fairness.seed_commitment(game_id, event.player_id, bytes.fromhex(event.seed))
            if got.hex() != committed:
                raise Failed(
                    f"{where}: the revealed seed's commitment is {got.hex()}, "
                    f"{event.player_id} committed to {committed}"
                )
    return 1


def _seats_hold_their_seeds(rows: Sequence[Row], state: TableState, dealt_at: int) -> None:
    """The proof's seat entries are the seeds given at the table, seat by seat."""
    started = next((r.event for r in rows if isinstance(r.event, GameStarted)), None)
    if started is None or started.proof is None:
        return  # the fairness step reports a missing deal or proof
    given = tuple(
        state.seed_of(seat.player_id) if seat.kind == "person" else None for seat in started.seats
    )
    if tuple(started.proof.client_seeds) != given:
        raise Failed(
            f"the proof's seat entries {_show(started.proof.client_seeds)} are not the seeds "
            f"given at the table before it dealt the game (table event v{dealt_at}): "
            f"{_show(given)}"
        )


def _show(seeds: Sequence[str | None]) -> str:
    return "[" + ", ".join("none" if s is None else s for s in seeds) + "]"
