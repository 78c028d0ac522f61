"""getGameState and listGameSteps over HTTP on a real database: the state at every version is
the fold of the first V stored events, redacted as the live views are while the game runs, and
everything public once it has ended (issue 26)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from service.domain.history import moment, states
from service.domain.rules.events import decode_event
from tests.e2e.api_client import Api, play_online_to_the_end, without_server_time


async def _get(api: Api, path: str) -> Any:
    """GET as `api`, waiting out the rate limit (200 a second a token) when a fast loop of
    reads meets it, as a client should (Retry-After)."""
    while True:
        response = await api.client.get(path, headers=api.headers)
        if response.status_code != 429:
            return response
        await asyncio.sleep(float(response.headers.get("retry-after", "1")))


async def _state(api: Api, game_id: str, version: int | str) -> Any:
    return await _get(api, f"/games/{game_id}/states/{version}")


def _live(view: dict[str, Any]) -> dict[str, Any]:
    """A live view as getGameState shows it at the same version: no clock, no head hash."""
    return {**without_server_time(view), "server_time": None, "head_hash": None}


def _exported(export: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    events = [decode_event(msgspec.json.encode(e["data"])) for e in export["events"]]
    return events, states(events)


async def test_a_solo_game_replays_as_it_was_seen_and_whole_after_the_end(ada: Api) -> None:
    game = (await ada.solo_table(players=4))["game"]
    gid = game["game_id"]
    seen: dict[int, dict[str, Any]] = {}  # the live view after each move, by version
    mid: dict[int, dict[str, Any]] = {}  # getGameState answers asked while the game ran
    view = game
    while view["phase"] != "ended":
        seen[view["version"]] = _live(view)
        if view["turn"] == 4 and not mid:
            for v in range(1, view["version"] + 1):
                response = await _state(ada, gid, v)
                assert response.status_code == 200, response.text
                mid[v] = response.json()
        if view["phase"] == "choosing":
            view = await ada.ok_move(gid, type="take_stem", stem=view["choice"]["cheapest"])
        else:
            await ada.ok_move(gid, type="tap", bee=view["hand"][-1])
            seen[(await ada.game(gid))["version"]] = _live(await ada.game(gid))
            view = await ada.ok_move(gid, type="confirm", bee=view["hand"][0])
    latest = view["version"]
    assert mid, "the game never reached turn 4"

    # While the game ran: the answer at V is what seat 1 saw then, and nothing else.
    for v, answer in mid.items():
        assert answer["over"] is False and answer["event"]["hash"] == ""
        for seat in answer["seats"]:
            if seat["seat"] != 1:
                assert seat["hand"] is None and seat["tapped"] is None
                assert seat["confirmed"] is None
        data = answer["event"]["data"]
        if answer["event"]["type"] == "game_started":
            assert [h is None for h in data["hands"]] == [False, True, True, True]
        if answer["event"]["type"] in ("bee_tapped", "pick_confirmed") and data["seat"] != 1:
            assert data["bee"] is None and answer["step"]["bee"] is None
        if v in seen:
            assert answer["view"] == seen[v], v

    # After the end: every version is the fold of the first V exported events, all public.
    response = await _get(ada, f"/games/{gid}/export")
    export = response.json()
    events, after = _exported(export)
    assert len(events) == len(after) >= latest
    final = await ada.game(gid)
    for v in range(1, final["version"] + 1):
        response = await _state(ada, gid, v)
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["over"] is True and answer["latest"] == final["version"]
        assert answer["event"]["hash"] == export["events"][v - 1]["hash"]
        assert answer["event"]["data"] == export["events"][v - 1]["data"]
        before = after[v - 2] if v > 1 else _initial()
        expected = moment(before, after[v - 1], events[v - 1], 1, True)
        expected_json = msgspec.json.decode(msgspec.json.encode(expected))
        assert answer["view"] | {"game_id": gid} == expected_json["view"] | {"game_id": gid}
        assert answer["seats"] == expected_json["seats"]
        assert answer["step"] == expected_json["step"]
        assert answer["changes"] == expected_json["changes"]
        assert all(seat["hand"] is not None for seat in answer["seats"])
        if v in seen:  # the view part is still the caller's view at that version
            assert answer["view"] == seen[v]

    steps = (await _get(ada, f"/games/{gid}/steps")).json()
    assert [s["version"] for s in steps["steps"]] == list(range(1, final["version"] + 1))
    assert [t["turn"] for t in steps["turns"]] == list(range(1, 11))
    for turn in steps["turns"]:
        assert turn["start"] < turn["reveal"] <= turn["last"]
        assert len(turn["flights"]) >= 4  # every seat's bee flew
        reveal = (await _state(ada, gid, turn["reveal"])).json()
        assert reveal["step"]["kind"] == "reveal" and len(reveal["in_flight"]) == 4


def _initial() -> Any:
    from service.domain.rules.engine import initial_state

    return initial_state


async def test_versions_out_of_range_and_strangers_get_clear_problems(anon: Api) -> None:
    ada = await anon.guest("Ada")
    bob = await anon.guest("Bob")
    game = (await ada.solo_table(players=2))["game"]
    gid, version = game["game_id"], game["version"]
    for bad in (version + 1, 2**31 - 1):
        response = await _state(ada, gid, bad)
        assert response.status_code == 404, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["code"] == "version-not-found"
        assert f"versions 1 to {version}" in response.json()["detail"]
    for bad in ("0", "-1", "x", str(2**31)):
        response = await _state(ada, gid, bad)
        assert response.status_code in (400, 404), response.text
        assert response.headers["content-type"].startswith("application/problem+json")
    # A solo game is its player's alone, at every version and in its steps.
    for path in (f"/games/{gid}/states/1", f"/games/{gid}/steps"):
        response = await bob.client.get(path, headers=bob.headers)
        assert response.status_code == 403, response.text
        assert response.json()["code"] == "forbidden"
    response = await anon.client.get(f"/games/{gid}/states/1")
    assert response.status_code == 401
    response = await ada.client.get(
        "/games/00000000-0000-4000-8000-000000000000/states/1", headers=ada.headers
    )
    assert response.status_code == 404 and response.json()["code"] == "not-found"


async def test_a_spectator_of_an_online_table_sees_no_hand_until_the_end(anon: Api) -> None:
    ada, bob, eve = [await anon.guest(n) for n in ("Ada", "Bob", "Eve")]
    table = await ada.create_table(seats=2)
    await bob.ok_table_action(table["table_id"], "seats")
    view = await ada.table(table["table_id"])
    gid = view["game"]["game_id"]
    await ada.ok_move(gid, type="tap", bee=view["game"]["hand"][0])
    now = (await ada.game(gid))["version"]
    for v in range(1, now + 1):
        answer = (await _state(eve, gid, v)).json()
        assert answer["view"]["you"] is None and answer["view"]["hand"] == []
        assert all(s["hand"] is None and s["tapped"] is None for s in answer["seats"])
        assert answer["event"]["hash"] == ""
    assert (await _state(eve, gid, now)).json()["step"]["text"] == "Ada taps a bee."
    mine = (await _state(ada, gid, now)).json()
    assert (
        mine["step"]["bee"] == view["game"]["hand"][0]
        and mine["seats"][0]["tapped"] == mine["step"]["bee"]
    )
    steps = (await eve.client.get(f"/games/{gid}/steps", headers=eve.headers)).json()
    assert steps["over"] is False and all(
        s["bee"] is None for s in steps["steps"] if s["kind"] == "tap"
    )


async def test_a_finished_online_game_replays_whole_for_every_seat_and_spectator(
    anon: Api,
) -> None:
    ada, bob, eve = [await anon.guest(n) for n in ("Ada", "Bob", "Eve")]
    table = await ada.create_table(seats=2)
    await bob.ok_table_action(table["table_id"], "seats")
    gid = (await ada.table(table["table_id"]))["game"]["game_id"]
    await play_online_to_the_end({1: ada, 2: bob}, gid)
    export = (await _get(ada, f"/games/{gid}/export")).json()
    events, after = _exported(export)
    for who, seat in ((ada, 1), (bob, 2), (eve, None)):
        for v in (2, len(events) // 2, len(events)):
            response = await _state(who, gid, v)
            assert response.status_code == 200, response.text
            answer = response.json()
            assert answer["over"] is True and answer["view"]["you"] == seat
            assert [s["hand"] for s in answer["seats"]] == [
                list(s.hand) for s in after[v - 1].seats
            ]
            assert answer["event"]["hash"] == export["events"][v - 1]["hash"]
        steps = (await _get(who, f"/games/{gid}/steps")).json()
        assert all(s["bee"] is not None for s in steps["steps"] if s["kind"] in ("tap", "confirm"))
