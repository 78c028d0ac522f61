"""A rolling deploy (issue 43, item 4 of the follow-up): an older instance shares the outbox with
a newer one that writes a kind of transfer the older does not know (`rate_game` was one, when
ratings came). The relay leaves such rows for a newer instance, and logs them; it neither fails
on them nor lets them hold up the transfers it can deliver."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import pytest

from service.bootstrap import bootstrap
from service.domain.transfers import KINDS, GrantReward, TransferUnion, encode_transfer
from service.store import outbox
from service.store.events import EventStore
from service.store.pool import Pool
from service.store.postgres import postgres_ports
from service.usecases import money
from tests.integration.test_coin_invariant import FAST_HASHER, FakeClock

_INSERT = """
insert into money_outbox (table_id, transfer_id, player_id, transfer, created_at)
values ($1, $2, $3, $4::jsonb, now() - make_interval(mins => $5))
"""


def test_every_transfer_kind_is_known() -> None:
    assert set(KINDS) == {t.__struct_config__.tag for t in TransferUnion.__args__}


class Recorder:
    """A module's logger, recording: structlog's `capture_logs` is process-wide, and a server
    thread of another test configuring structlog meanwhile made it miss a line (whole-suite
    runs only)."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def __getattr__(self, level: str) -> Any:
        def record(event: str, **values: Any) -> None:
            self.lines.append({"event": event, "log_level": level, **values})

        return record


async def test_the_relay_leaves_a_newer_kind_and_delivers_the_rest(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    swarm = bootstrap(postgres_ports(pool, EventStore(pool)), clock=FakeClock(), hasher=FAST_HASHER)
    ann = (await swarm.accounts.register(f"k{uuid.uuid4().hex[:12]}", "long enough", None)).player
    me, table = ann.player_id, f"t-{uuid.uuid4()}"
    newer = {"kind": "award_trophy", "player_id": me, "table_id": table, "trophy": "gold"}
    # A kind this version knows, in a shape it cannot read (a newer version's, say).
    unreadable = {"kind": "grant_reward", "player_id": me, "table_id": table, "won": "yes"}
    reward = GrantReward(
        player_id=me, table_id=table, game_id=str(uuid.uuid4()), won=True, stings=3,
        biggest_take=2, day="2026-12-07",
    )  # fmt: skip
    # The unknown rows are the oldest: a relay that claimed by age alone would meet them first.
    await pool.execute(_INSERT, table, "trophy:1", me, json.dumps(newer), 60)
    await pool.execute(_INSERT, table, "reward:bad", me, json.dumps(unreadable), 50)
    await pool.execute(_INSERT, table, reward.transfer_id, me, encode_transfer(reward).decode(), 40)
    try:
        recorder = Recorder()
        monkeypatch.setattr(money, "log", recorder)
        monkeypatch.setattr(outbox, "log", recorder)
        assert await swarm.money.relay_due(after=timedelta(0), limit=2) == 1
        assert await swarm.money.relay_due(after=timedelta(0)) == 0  # no loop
        assert await swarm.money.report_unknown() == {"award_trophy": 1}
        logs = recorder.lines
        record = await swarm.repository.player_record(me)
        assert record.stats.games_played == 1  # the reward was delivered, past the rows left
        left = await pool.fetch(
            "select transfer_id from money_outbox where table_id = $1 order by 1", table
        )
        assert [r[0] for r in left] == ["reward:bad", "trophy:1"]
        warned = [e for e in logs if e["log_level"] == "warning"]
        assert any(e["event"] == "transfers left for a newer instance" for e in warned), logs
        assert any(
            e["event"] == "transfer left for a newer instance" and "$.won" in e["error"]
            for e in warned
        ), logs
    finally:
        await pool.execute("delete from money_outbox where table_id = $1", table)


async def test_a_page_of_unreadable_rows_is_logged_once_and_passed_over(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More unreadable rows than a claim takes, all older than a deliverable one: each is
    logged once, then passed over, and the deliverable row is delivered (a relay that claimed
    them again each sweep never got past them, and logged each every 2 s)."""
    swarm = bootstrap(postgres_ports(pool, EventStore(pool)), clock=FakeClock(), hasher=FAST_HASHER)
    ann = (await swarm.accounts.register(f"k{uuid.uuid4().hex[:12]}", "long enough", None)).player
    me, table = ann.player_id, f"t-{uuid.uuid4()}"
    unreadable = {"kind": "grant_reward", "player_id": me, "table_id": table, "won": "yes"}
    reward = GrantReward(
        player_id=me, table_id=table, game_id=str(uuid.uuid4()), won=True, stings=3,
        biggest_take=2, day="2026-12-07",
    )  # fmt: skip
    for n in range(3):
        await pool.execute(_INSERT, table, f"reward:bad{n}", me, json.dumps(unreadable), 60 - n)
    await pool.execute(_INSERT, table, reward.transfer_id, me, encode_transfer(reward).decode(), 40)
    try:
        recorder = Recorder()
        monkeypatch.setattr(outbox, "log", recorder)
        delivered = [await swarm.money.relay_due(after=timedelta(0), limit=2) for _ in range(4)]
        assert sum(delivered) == 1 and delivered[-1] == 0, delivered
        record = await swarm.repository.player_record(me)
        assert record.stats.games_played == 1
        left = [e for e in recorder.lines if e["event"] == "transfer left for a newer instance"]
        assert sorted(json.loads(e["transfer"])["won"] for e in left) == ["yes"] * 3
        assert len(left) == 3, recorder.lines  # once each, over four sweeps
        remaining = await pool.fetch(
            "select transfer_id from money_outbox where table_id = $1 order by 1", table
        )
        assert [r[0] for r in remaining] == ["reward:bad0", "reward:bad1", "reward:bad2"]
    finally:
        await pool.execute("delete from money_outbox where table_id = $1", table)
