"""Coins are never made or lost by play: over random sequences of table openings, joins,
leaves, starts, finished and abandoned games, play again, and sitting down or leaving between
games, wallets + held stakes + open pots = coins granted, no balance is ever negative, and no
hold outlives the game it was held for: a stake is held only for a table's first game, by a
person seated there, until that game is dealt (seed §9; hypothesis drives the sequences)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import psycopg
from argon2 import PasswordHasher
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from service.api.moves import ChooseStem, Confirm, person_move
from service.bootstrap import Swarm, bootstrap
from service.domain.ledger import WalletState, decode_wallet_event, evolve_wallet
from service.domain.refusals import Refused
from service.domain.rules.events import ClockSettings
from service.store.pool import Pool
from service.store.port import EventLog, Ports
from service.store.postgres import postgres_ports
from service.usecases.identity import Player
from tests.coins import count

PLAYERS = 4
# Cheap hashing: these tests are about coins, not passwords.
FAST_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC) + timedelta(days=730)

    def __call__(self) -> datetime:
        return self.now


# Weighted towards tables that fill and play: joins are common, tables few.
_table = st.integers(0, 1)
operation = st.one_of(
    st.tuples(st.just("open"), st.integers(0, PLAYERS - 1), st.sampled_from([50, 300, 700])),
    *[st.tuples(st.just("join"), st.integers(0, PLAYERS - 1), _table)] * 4,
    st.tuples(st.just("leave"), st.integers(0, PLAYERS - 1), _table),
    st.tuples(st.just("start"), st.integers(0, PLAYERS - 1), _table),
    *[st.tuples(st.just("finish"), st.integers(0, PLAYERS - 1), _table)] * 2,
    *[st.tuples(st.just("abandon"), st.integers(0, PLAYERS - 1), _table)] * 2,
    *[st.tuples(st.just("again"), st.integers(0, PLAYERS - 1), _table)] * 2,
    *[st.tuples(st.just("sit_out"), st.integers(0, PLAYERS - 1), _table)] * 2,
    *[st.tuples(st.just("fill"), st.integers(0, PLAYERS - 1), _table)] * 2,
)


async def holds_by_table(store: EventLog, player: Player) -> dict[str, int]:
    """What the player's wallet holds, table by table (zero holds left out)."""
    holds: dict[str, int] = {}
    for r in await store.read_stream(f"wallet-{player.player_id}"):
        event: Any = decode_wallet_event(r.data)
        sign = {"stake_held": 1, "stake_released": -1, "stake_committed": -1}.get(r.type, 0)
        if sign:
            holds[event.table_id] = holds.get(event.table_id, 0) + sign * event.amount
    return {table: amount for table, amount in holds.items() if amount}


async def check_no_hold_outlives_its_game(
    swarm: Swarm, store: EventLog, players: list[Player]
) -> None:
    for player in players:
        for table_id, amount in (await holds_by_table(store, player)).items():
            table = await swarm.repository.table(table_id)
            assert amount == table.stake, (table_id, amount)
            assert not table.closed and not table.games, f"{amount} held after its game"
            assert table.seat_of(player.player_id) is not None, "held by someone not seated"


async def check_invariant(ports: Ports, players: list[Player]) -> int:
    """Returns the coins the wallets put into pots and were not paid back yet."""
    granted = in_hand = committed = paid = 0
    for player in players:
        wallet = WalletState()
        for r in await ports.log.read_stream(f"wallet-{player.player_id}"):
            event: Any = decode_wallet_event(r.data)
            wallet = evolve_wallet(wallet, event)
            committed += event.amount if r.type == "stake_committed" else 0
            paid += event.amount if r.type == "pot_paid" else 0
            assert wallet.balance >= 0 and wallet.held >= 0
        granted += wallet.granted
        in_hand += wallet.balance + wallet.held
        row = await ports.standings.coins(player.player_id)  # the wallet's projection
        assert row is not None and (row.balance, row.held) == (wallet.balance, wallet.held)
    assert in_hand + (committed - paid) == granted
    return committed - paid


def check_across_shards(
    database_url: str, players: list[Player], tables: list[str], committed_less_paid: int
) -> None:
    """The tables' pots, counted on the tables' side, are what the wallets put in and were not
    yet paid; and nothing is left in flight: every request delivers what its table owes."""
    with psycopg.connect(database_url) as conn:
        counted = count(conn, [p.player_id for p in players], tables)
    assert counted.conserved, counted
    assert counted.outbox_rows == 0, counted
    assert counted.pots == committed_less_paid, counted


async def run(
    ports_on: Callable[[FakeClock], Ports],
    operations: list[tuple[str, int, int]],
    database_url: str | None = None,
) -> None:
    """`ports_on(clock)`: the store to run on (its clock, for a store that keeps time itself);
    `database_url`: PostgreSQL's, to count the coins across shards as an auditor would."""
    clock = FakeClock()
    ports = ports_on(clock)
    store = ports.log
    swarm = bootstrap(ports, clock=clock, hasher=FAST_HASHER)
    accounts = swarm.accounts
    players = []
    for i in range(PLAYERS):
        session = await accounts.register(f"p{uuid.uuid4().hex[:12]}{i}", "long enough", None)
        players.append(session.player)
    tables: list[str] = []

    async def play_out(table_id: str) -> None:
        view = (await swarm.tables.get_table(players[0], table_id)).table
        game_id = view.games[-1] if view.games else None
        if game_id is None:
            return
        for _ in range(200):
            game = await swarm.repository.game(game_id)
            if game.phase == "ended":
                return
            for seat in game.seats:
                pid = seat.info.player_id
                who = next((p for p in players if p.player_id == pid), None)
                if who is None or not seat.playing:
                    continue
                try:
                    if (
                        game.phase == "choosing"
                        and game.pending
                        and game.pending.seat == seat.number
                    ):
                        move: Any = ChooseStem(stem=1, move_id=uuid.uuid4().hex)
                    elif game.phase == "picking" and seat.confirmed is None:
                        move = Confirm(bee=seat.hand[0], move_id=uuid.uuid4().hex)
                    else:
                        continue
                    await swarm.play.submit_move(who, game_id, person_move(move))
                except Refused:
                    pass
                game = await swarm.repository.game(game_id)

    async def abandon(table_id: str) -> None:
        for _ in range(4):
            view = (await swarm.tables.get_table(players[0], table_id)).table
            if not view.games:
                return
            game = await swarm.repository.game(view.games[-1])
            if game.phase == "ended" or game.deadline is None:
                return
            clock.now = max(clock.now, game.deadline)
            while await swarm.turn_clock.fire_due_timers():
                pass

    for kind, who, which in operations:
        player = players[who]
        table_id = tables[which] if which < len(tables) else None
        try:
            if kind == "open":
                clock_settings = ClockSettings(turn_seconds=20, choice_seconds=10)
                view = (await swarm.tables.create_table(player, 3, which, clock_settings)).table
                tables.append(view.table_id)
            elif table_id is None:
                continue
            elif kind == "join":
                await swarm.tables.join_table(player, table_id, None)
            elif kind == "leave":
                await swarm.tables.leave_table(player, table_id)
            elif kind == "start":
                await swarm.tables.start_game(player, table_id, None)
            elif kind == "again":
                await swarm.tables.play_again(player, table_id, None)
            elif kind == "fill":  # everyone else tries to sit down
                for other in players:
                    if other is not player:
                        try:
                            await swarm.tables.join_table(other, table_id, None)
                        except Refused as refused:
                            event(f"refused: {refused.code}")
            elif kind == "sit_out":  # sit down and leave again (between games, often)
                await swarm.tables.join_table(player, table_id, None)
                await swarm.tables.leave_table(player, table_id)
            elif kind == "finish":
                await play_out(table_id)
            elif kind == "abandon":
                await abandon(table_id)
        except Refused as refused:
            event(f"refused: {refused.code}")  # refused: must change nothing (checked below)
        else:
            event(f"done: {kind}")
        in_pots = await check_invariant(ports, players)
        if database_url is not None:
            check_across_shards(database_url, players, tables, in_pots)
        await check_no_hold_outlives_its_game(swarm, store, players)
    for table_id in tables:
        recorded = await store.read_stream(f"table-{table_id}")
        for kind in sorted({r.type for r in recorded}):
            event(f"table event: {kind}")
        for r in recorded:
            if r.type == "pot_settled":
                event(f"pot settled: {msgspec.json.decode(r.data)['reason']}")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    stake=st.sampled_from([50, 300, 700]),
    operations=st.lists(operation, min_size=8, max_size=24),
)
async def test_coins_are_conserved_over_random_table_histories(
    pool: Pool, database_url: str, stake: int, operations: list[tuple[str, int, int]]
) -> None:
    await run(
        lambda clock: postgres_ports(pool), [("open", 0, stake), *operations], database_url
    )  # every history has a table to act on
