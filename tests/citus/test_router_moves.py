"""A solo game's requests are router statements only, by Citus' own count (issue 46): solo
games played through the API to their end and again, the coordinator's `citus_stat_counters`
read around every request. A move (the game's last one too: it reads the game's server seed to
seal the reveal) and a play-again add no multi-shard execution; before the seed was read by its
shard key (`service/store/secrets.py`), each game's end and play-again read every shard."""

from __future__ import annotations

from collections import Counter

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from tests.e2e.api_client import Api

_COUNTERS = """
select query_execution_single_shard, query_execution_multi_shard
  from citus_stat_counters where name = current_database()
"""


async def test_a_solo_games_moves_and_play_again_are_router_statements(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_METRICS", "0")  # the lobby gauge reads every shard, on its own
    counters = psycopg.connect(database_url, autocommit=True)

    def now() -> tuple[int, int]:
        row = counters.execute(_COUNTERS).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    single: Counter[str] = Counter()
    multi: Counter[str] = Counter()
    app = create_app(database_url, run_clock=False)
    try:
        async with AsyncTestClient(app=app) as client:
            api = await Api(client).guest("Router")
            table = await api.solo_table()
            table_id, view = table["table_id"], table["game"]
            games = 0
            while games < 2:
                before = now()
                if view["phase"] == "ended":
                    games += 1
                    kind = "play again"
                    view = (await api.ok_table_action(table_id, "games"))["game"]
                elif view["phase"] == "choosing":
                    kind = "move"
                    stem = view["choice"]["cheapest"]
                    view = await api.ok_move(view["game_id"], type="take_stem", stem=stem)
                else:
                    kind = "move"
                    view = await api.ok_move(view["game_id"], type="confirm", bee=view["hand"][0])
                after = now()
                single[kind] += after[0] - before[0]
                multi[kind] += after[1] - before[1]
    finally:
        counters.close()
    assert single["move"] > 0 and single["play again"] > 0, single
    assert multi == Counter(), multi
