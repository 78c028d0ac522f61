"""Coins counted across shards, as an auditor with the database would count them: every wallet
(balance and holds) of some people, the pots of some tables, and the transfers in flight
between them (the tables' outboxes, `service.domain.transfers.in_flight`). Used by the coin
invariant test and the fault tests: whatever was cut short, these always add up."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from service.domain.ledger import WalletState, decode_wallet_event, evolve_wallet
from service.domain.table_events import decode_table_event
from service.domain.tables import TableState, evolve_table
from service.domain.transfers import decode_transfer, in_flight


@dataclass(frozen=True)
class Count:
    granted: int  # every coin ever minted to these wallets
    balances: int
    held: int
    pots: int  # in the tables' pots, not yet settled
    committed_in_flight: int  # in a pot, and still in its wallet's holds until delivered
    paid_in_flight: int  # out of a pot, not yet in its wallet
    transfers_left: int  # transfers in the tables' outboxes not delivered yet
    outbox_rows: int  # rows in the tables' outboxes, delivered or not

    @property
    def conserved(self) -> bool:
        return (
            self.balances + self.held + self.pots - self.committed_in_flight + self.paid_in_flight
            == self.granted
        )


def wallets(conn: psycopg.Connection, player_ids: Sequence[str]) -> dict[str, WalletState]:
    found = {pid: WalletState() for pid in player_ids}
    rows = conn.execute(
        "select stream, data::text from events where stream = any(%s) order by stream, version",
        ([f"wallet-{pid}" for pid in player_ids],),
    )
    for stream, data in rows:
        pid = stream.removeprefix("wallet-")
        found[pid] = evolve_wallet(found[pid], decode_wallet_event(data))
    return found


def tables(conn: psycopg.Connection, table_ids: Sequence[str]) -> dict[str, TableState]:
    found = {tid: TableState() for tid in table_ids}
    rows = conn.execute(
        "select stream, data::text from events where stream = any(%s) order by stream, version",
        ([f"table-{tid}" for tid in table_ids],),
    )
    for stream, data in rows:
        tid = stream.removeprefix("table-")
        found[tid] = evolve_table(found[tid], decode_table_event(data))
    return found


def count(conn: psycopg.Connection, player_ids: Sequence[str], table_ids: Sequence[str]) -> Count:
    """Everything these people's coins can be in, given that they only sat at these tables."""
    held_by = wallets(conn, player_ids)
    pots = sum(s.amount for t in tables(conn, table_ids).values() for s in t.pot)
    # A transfer whose delivery was appended but whose outbox row is not deleted yet (a crash
    # between the two) has arrived: its command id is processed on the person's stream.
    transfers = [
        decode_transfer(text)
        for (text,) in conn.execute(
            "select o.transfer::text from money_outbox o"
            " where o.table_id = any(%s) and not exists ("
            "   select 1 from processed_commands c"
            "    where c.command_id = o.transfer_id"
            "      and c.stream in ('wallet-' || o.player_id, 'player-' || o.player_id))",
            (list(table_ids),),
        )
    ]
    flight = in_flight(transfers)
    rows = conn.execute(
        "select count(*) from money_outbox where table_id = any(%s)", (list(table_ids),)
    ).fetchone()
    return Count(
        granted=sum(w.granted for w in held_by.values()),
        balances=sum(w.balance for w in held_by.values()),
        held=sum(w.held for w in held_by.values()),
        pots=pots,
        committed_in_flight=flight.committed,
        paid_in_flight=flight.paid,
        transfers_left=len(transfers),
        outbox_rows=rows[0] if rows else 0,
    )
