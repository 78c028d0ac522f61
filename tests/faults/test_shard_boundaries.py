"""Would the store shard by table (Citus, distributed by table id)? Every append the service
makes must stay inside one table: at most one `table-<id>` stream, plus game streams of that
table's games only, plus the rows written with it (lobby, timers, deal secrets, processed
commands) of that table or its games. A person's streams (`player-<id>`, `wallet-<id>`) shard by
the person: they may be appended together, but not with a table's or another person's.
docs/scaling.md explains why.

The test instruments `EventStore.append_statements` (every append's statements) and drives
every kind of write through the API: guests, a solo table played to the end and again, an
online table (join, fill with bees, the clock playing a turn, a seed for the next game, play
again, leaving mid-game, closing).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.bootstrap import bootstrap
from service.store.events import EventStore
from service.store.log import StreamAppend
from service.store.pool import Pool
from service.store.postgres import postgres_ports
from tests.e2e.api_client import Api, play_online_to_the_end

Call = tuple[list[str], tuple[str, str] | None, list[tuple[str, Sequence[Any]]]]


@pytest.fixture
def appends(monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    calls: list[Call] = []
    original = EventStore.append_statements

    async def spy(
        self: EventStore,
        *batch: StreamAppend,
        metadata: Mapping[str, Any] | None = None,
        command: tuple[str, str] | None = None,
        also: Sequence[tuple[str, Sequence[Any]]] = (),
        guard: tuple[str, Sequence[Any]] | None = None,
    ) -> Any:
        calls.append(([a.stream for a in batch], command, list(also)))
        return await original(
            self, *batch, metadata=metadata, command=command, also=also, guard=guard
        )

    monkeypatch.setattr(EventStore, "append_statements", spy)
    return calls


def violations(calls: list[Call], table_of_game: dict[str, str]) -> list[str]:
    found = []
    for streams, command, also in calls:
        tables = {s.removeprefix("table-") for s in streams if s.startswith("table-")}
        games = {s.removeprefix("game-") for s in streams if s.startswith("game-")}
        others = [s for s in streams if not s.startswith(("table-", "game-"))]
        people_rows: set[str] = set()
        owners = tables | {table_of_game.get(g, f"?{g}") for g in games}
        # Rows written in the same transaction: lobby and table members (table id), timers and
        # deal secrets (game id), all keyed by their first argument.
        for sql, args in also:
            key = str(args[0]) if args else ""
            if "lobby" in sql or "table_members" in sql or "money_outbox" in sql:
                owners.add(key)
            elif "timers" in sql or "deal_secrets" in sql:
                owners.add(table_of_game.get(key, f"?{key}"))
            elif "player_games" in sql:  # keyed by the game: its people are the first argument,
                game = key if isinstance(args[0], str) else str(args[1])  # or second (Citus)
                owners.add(table_of_game.get(game, f"?{game}"))
            elif any(
                t in sql
                for t in ("accounts", "wallets", "player_stats", "access_tokens", "stake_holds")
            ):
                if tables or games:
                    found.append(f"a person's row written with a table: {sql.split()[:4]}")
                if "access_tokens" not in sql:  # keyed by the token's hash, not the person
                    people_rows.add(key)
            else:
                found.append(f"unclassified statement in an append: {sql.split()[:4]}")
        if command is not None and command[0] not in streams:
            found.append(f"command on a stream it does not append: {command}")
        # Streams of a person (player-<id>, wallet-<id>) shard by that person's id: together
        # they are fine (sign-up writes both), with another person's or a table's they are not.
        people = {s.split("-", 1)[1] for s in others}
        if others and (tables or games or len(people) > 1):
            found.append(f"a person's streams appended with others: {streams}")
        # A person's rows (keyed by player id) belong to the person whose streams are appended.
        if people and people_rows - people:
            found.append(f"another person's rows written with {sorted(people)}: {people_rows}")
        if len(owners) > 1:
            found.append(f"append spans tables {sorted(owners)}: {streams}")
    return found


async def test_every_append_stays_inside_one_table(
    database_url: str, pool: Pool, appends: list[Call]
) -> None:
    # A year ahead, so no other app of the test session (real clock) fires these timers.
    now = [datetime.now(UTC) + timedelta(days=365)]
    timers = bootstrap(postgres_ports(pool), clock=lambda: now[0]).turn_clock
    app = create_app(database_url, clock=lambda: now[0], run_clock=False)
    async with AsyncTestClient(app=app) as client:
        anon = Api(client)
        ada, bob = await anon.guest("Ada"), await anon.guest("Bob")

        solo = await ada.solo_table(4)
        await ada.play_to_the_end(solo["game"]["game_id"])
        await ada.ok_table_action(solo["table_id"], "games")  # play again

        table = await ada.create_table(seats=4, turn_seconds=5, choice_seconds=5)
        tid = table["table_id"]
        await bob.ok_table_action(tid, "seats")
        game = (await ada.ok_table_action(tid, "bees"))["game"]
        now[0] += timedelta(seconds=6)  # the first turn's clock runs out
        assert await timers.fire_due_timers() >= 1
        await play_online_to_the_end({1: ada, 2: bob}, game["game_id"])
        seed = await client.post(
            f"/tables/{tid}/seed", json={"client_seed": "ab" * 8}, headers=bob.headers
        )
        assert seed.status_code in (200, 201), seed.text
        await ada.ok_table_action(tid, "games")  # play again …
        await bob.ok_table_action(tid, "leave")  # … and leave mid-game
        await ada.ok_table_action(tid, "leave")  # the table closes

    with psycopg.connect(database_url) as conn:
        table_of_game = {
            stream.removeprefix("game-"): table_id
            for stream, table_id in conn.execute(
                "select stream, data->>'table_id' from events where type = 'deal_committed'"
            )
        }
    assert len(appends) >= 20
    problems = violations(appends, table_of_game)
    assert not problems, problems


def test_the_check_sees_an_append_across_tables() -> None:
    games = {"g1": "t1", "g2": "t2"}
    assert not violations([(["table-t1", "game-g1"], None, [])], games)
    assert violations([(["table-t1", "game-g2"], None, [])], games)
    assert violations([(["game-g1", "game-g2"], None, [])], games)
    assert violations([(["table-t1", "wallet-p1"], None, [])], games)
    assert violations([(["player-p1", "wallet-p2"], None, [])], games)
    assert not violations([(["player-p1", "wallet-p1"], None, [])], games)
    assert violations([(["game-g1"], None, [("insert into timers …", ("g2", 0))])], games)


async def test_stakes_stay_inside_one_table(
    database_url: str, pool: Pool, appends: list[Call]
) -> None:
    """Every way coins move at a buy-in table, each append inside one shard: the host's hold
    as the table opens, a join and a leave before the first deal (hold, give back), the stakes
    into the pot at the deal, the pot paid and the rewards at the end, and a hold whose
    sit-down never finished, given back by the sweeper."""
    app = create_app(database_url, run_clock=False)
    async with AsyncTestClient(app=app) as client:
        people = []
        for name in ("Ann", "Ben", "Cy"):
            r = await client.post(
                "/accounts",
                json={"name": f"{name}{uuid.uuid4().hex[:8]}", "password": "correct horse"},
            )
            assert r.status_code == 201, r.text
            people.append(Api(client, r.json()["token"]))
        ann, ben, cy = people
        table = await ann.create_table(seats=3, stake=10, turn_seconds=600, choice_seconds=600)
        tid = table["table_id"]
        await cy.ok_table_action(tid, "seats")
        await cy.ok_table_action(tid, "leave")  # before the first deal: the stake goes back
        await ben.ok_table_action(tid, "seats")
        game = (await cy.ok_table_action(tid, "seats"))["game"]  # full: the first deal
        await play_online_to_the_end({1: ann, 2: ben, 3: cy}, game["game_id"])

        # A sit-down cut short after the wallet's hold: the sweeper gives it back.
        service = bootstrap(postgres_ports(pool))
        assert cy.token is not None
        player = await service.identity.authenticate(cy.token)
        cy_id = player.player_id
        other = await ann.create_table(seats=2, stake=10, turn_seconds=600, choice_seconds=600)
        await service.money.hold(player, other["table_id"], 10)
        assert await service.money.expire_holds(after=timedelta(0)) == 1

    with psycopg.connect(database_url) as conn:
        table_of_game = {
            stream.removeprefix("game-"): table_id
            for stream, table_id in conn.execute(
                "select stream, data->>'table_id' from events where type = 'deal_committed'"
            )
        }
        moved = {
            t
            for (t,) in conn.execute(
                "select type from events where stream = %s", (f"wallet-{cy_id}",)
            )
        }
        left = conn.execute(
            "select count(*) from money_outbox where table_id = any(%s)",
            ([tid, other["table_id"]],),
        ).fetchone()
    # The flows above did move coins, in wallet appends of their own.
    assert {"stake_held", "stake_released", "stake_committed"} <= moved, moved
    assert any(s.startswith("wallet-") for streams, _, _ in appends for s in streams)
    assert left == (0,)
    problems = violations(appends, table_of_game)
    assert not problems, problems
