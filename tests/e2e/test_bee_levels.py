"""Bee levels over HTTP (README "The bee players"): chosen with `createSoloTable` and
`fillWithBees`, shown in the table and game views, and re-runnable by an auditor: with the server
seed revealed after the game, every medium ("strong"), hard or expert bee's pick is derived again
from its decision seed."""

from __future__ import annotations

import json

import pytest

from service.domain.rules import expert
from service.domain.rules.bees import bee_decision_seed, choose, view_for
from service.domain.rules.engine import GameState, evolve, initial_state
from service.domain.rules.events import (
    BeeLevel,
    DealRevealed,
    PickConfirmed,
    TurnStarted,
    decode_event,
)
from service.domain.rules.levels import LEVELS, level
from tests.e2e.api_client import Api, play_online_to_the_end
from tests.e2e.test_solo_api import assert_problem


async def _audit_strong_picks(api: Api, game_id: str, level: BeeLevel = "strong") -> int:
    """Replay the exported game; at each turn, re-run every `level` bee's decision from its seed
    and compare with the recorded pick. Returns how many picks were checked."""
    response = await api.client.get(f"/games/{game_id}/export", headers=api.headers)
    assert response.status_code == 200, response.text
    events = [decode_event(json.dumps(e["data"])) for e in response.json()["events"]]
    revealed = events[-1]
    assert isinstance(revealed, DealRevealed)
    server_seed = bytes.fromhex(revealed.server_seed)
    state: GameState = initial_state
    expected: dict[int, int] = {}
    checked = 0
    for event in events:
        if isinstance(event, PickConfirmed) and event.seat in expected:
            assert event.bee == expected.pop(event.seat), (state.turn, event.seat)
            checked += 1
        state = evolve(state, event)
        if isinstance(event, TurnStarted):
            for seat in state.seats:
                if seat.is_bee and seat.info.level == level and seat.playing:
                    seed = bee_decision_seed(server_seed, game_id, seat.number, event.turn, "pick")
                    expected[seat.number] = choose(view_for(state, seat.number), level, seed)
    assert not expected
    return checked


async def test_a_solo_table_of_strong_bees_shows_their_level_and_an_audit_reruns_them(
    ada: Api,
) -> None:
    response = await ada.client.post(
        "/solo-tables", json={"players": 3, "level": "strong"}, headers=ada.headers
    )
    assert response.status_code == 201, response.text
    table = response.json()
    assert [s.get("level") for s in table["seats"]] == [None, "strong", "strong"]
    game = table["game"]
    assert [s["level"] for s in game["seats"]] == [None, "strong", "strong"]
    final = await ada.play_to_the_end(game["game_id"])
    assert final["phase"] == "ended"
    assert await _audit_strong_picks(ada, game["game_id"]) == 20  # 2 bees, 10 turns


async def test_an_expert_bee_plays_a_solo_game_and_an_audit_reruns_it(
    ada: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(expert, "WORK", 20_000)  # the server runs in this process: the same code
    response = await ada.client.post(
        "/solo-tables", json={"players": 2, "level": "expert"}, headers=ada.headers
    )
    assert response.status_code == 201, response.text
    table = response.json()
    assert [s.get("level") for s in table["seats"]] == [None, "expert"]
    final = await ada.play_to_the_end(table["game"]["game_id"])
    assert final["phase"] == "ended"
    assert await _audit_strong_picks(ada, table["game"]["game_id"], "expert") == 10


async def test_the_default_level_is_easy(ada: Api) -> None:
    table = await ada.solo_table(players=3)
    assert [s.get("level") for s in table["seats"]] == [None, "easy", "easy"]
    assert [s["level"] for s in table["game"]["seats"]] == [None, "easy", "easy"]


@pytest.mark.parametrize(("old", "now"), [("heuristic", "easy"), ("strong", "medium")])
async def test_an_older_level_name_is_accepted_and_recorded_as_sent(
    ada: Api, old: BeeLevel, now: BeeLevel
) -> None:
    """The names before easy/medium/hard/expert still work: the seat records the name asked
    for (stored games keep theirs), and its bees play at the level it names now."""
    response = await ada.client.post(
        "/solo-tables", json={"players": 3, "level": old}, headers=ada.headers
    )
    assert response.status_code == 201, response.text
    table = response.json()
    assert [s.get("level") for s in table["seats"]] == [None, old, old]
    assert [s["level"] for s in table["game"]["seats"]] == [None, old, old]
    assert level(old) is LEVELS[now]


async def test_an_unknown_level_is_a_400(ada: Api) -> None:
    response = await ada.client.post(
        "/solo-tables", json={"players": 4, "level": "grandmaster"}, headers=ada.headers
    )
    assert_problem(response, 400)


async def test_the_host_fills_an_online_table_with_strong_bees(anon: Api) -> None:
    hana, bob = await anon.guest("Hana"), await anon.guest("Bob")
    tid = (await hana.create_table(seats=3))["table_id"]
    await bob.ok_table_action(tid, "seats")
    response = await hana.client.post(
        f"/tables/{tid}/bees", json={"level": "strong"}, headers=hana.headers
    )
    assert response.status_code == 200, response.text
    started = response.json()
    assert [s.get("level") for s in started["seats"]] == [None, None, "strong"]
    gid = started["game"]["game_id"]
    listed = [t for t in (await bob.lobby())["tables"] if t["table_id"] == tid]
    assert [t["bee_levels"] for t in listed] == [["strong"]]
    seen_by_bob = await bob.game(gid)
    assert [s["level"] for s in seen_by_bob["seats"]] == [None, None, "strong"]
    final = await play_online_to_the_end({1: hana, 2: bob}, gid)
    assert final["phase"] == "ended"
    assert await _audit_strong_picks(bob, gid) == 10
