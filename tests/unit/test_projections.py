"""Every row an append commits with its events (`service.store.rows`) becomes statements that
fold into the append's own statement on PostgreSQL (`service.store.projections`): plain INSERT,
UPDATE or DELETE with their arguments numbered from $1, so the append stays one round trip."""

from __future__ import annotations

import re
import typing
from datetime import UTC, datetime

from service.domain.transfers import ReleaseStake
from service.store.events import FOLDABLE
from service.store.projections import statements
from service.store.rows import (
    AccessToken,
    Account,
    DealSecret,
    GamesPlayed,
    LobbyListing,
    OwedTransfer,
    Row,
    Rows,
    StakeHold,
    StakeHoldEnded,
    Standing,
    TableMembers,
    Timer,
    WalletBalance,
)

AT = datetime(2031, 1, 1, tzinfo=UTC)
ONE_OF_EACH: list[Row] = [
    DealSecret(game_id="g", server_seed=bytes(32)),
    Timer(game_id="g", deadline=AT),
    WalletBalance(player_id="p", balance=1, held=2, granted=3, version=4),
    Standing(player_id="p", name="Ada", games_played=1, badges=("first_game",)),
    StakeHold(player_id="p", hold_id="h", table_id="t", amount=5),
    StakeHoldEnded(player_id="p", hold_id="h"),
    OwedTransfer(transfer=ReleaseStake(player_id="p", table_id="t", hold_id="h", amount=5)),
    LobbyListing(
        table_id="t",
        host_id="p",
        host_name="Ada",
        seats_taken=1,
        people=1,
        capacity=4,
        stake=0,
        status="open",
    ),
    TableMembers(table_id="t", people=("p",), mode="online"),
    GamesPlayed(game_id="g", table_id="t", mode="online", rated=True, people=("p", "q")),
    Account(player_id="p", name="Ada", password_hash="h", name_key="ada"),
    AccessToken(token_hash=bytes(32), player_id="p", name="Ada", expires_at=AT),
]


def test_every_kind_of_row_is_here() -> None:
    assert {type(r) for r in ONE_OF_EACH} == set(typing.get_args(Rows))


def test_every_row_folds_into_the_append() -> None:
    for row in ONE_OF_EACH:
        for sql, args in statements(row):
            assert FOLDABLE.match(sql), (type(row).__name__, sql)
            numbers = {int(n) for n in re.findall(r"\$(\d+)", sql)}
            assert numbers == set(range(1, len(args) + 1)), (type(row).__name__, sql)
