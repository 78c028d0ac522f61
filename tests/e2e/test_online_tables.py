"""Online tables (seed §9) over HTTP: lobby, seats, bees at the table, leaving, play again."""

from __future__ import annotations

from tests.e2e.api_client import Api, play_online_to_the_end
from tests.e2e.test_solo_api import assert_problem


async def test_two_people_and_two_bees_play_a_whole_game_then_play_again(anon: Api) -> None:
    hana, bob = await anon.guest("Hana"), await anon.guest("Bob")
    table = await hana.create_table(seats=4)
    tid = table["table_id"]
    assert table["status"] == "open" and table["you"] == 1 and table["mode"] == "online"
    await bob.ok_table_action(tid, "seats")
    started = await hana.ok_table_action(tid, "bees")
    assert [s["name"] for s in started["seats"]] == ["Hana", "Bob", "Buzz", "Bumble"]
    assert started["status"] == "playing"
    gid = started["game"]["game_id"]
    final = await play_online_to_the_end({1: hana, 2: bob}, gid)
    assert final["phase"] == "ended" and final["result"]["reason"] == "finished"
    after = await bob.table(tid)
    assert after["status"] == "between_games"
    again = await bob.ok_table_action(tid, "games")
    assert again["games"][0] == gid and again["game"]["game_id"] == again["games"][1]
    assert again["game"]["turn"] == 1 and again["status"] == "playing"


async def test_the_game_starts_when_the_table_is_full(anon: Api) -> None:
    hana, bob = await anon.guest("Hana"), await anon.guest("Bob")
    tid = (await hana.create_table(seats=2))["table_id"]
    joined = await bob.ok_table_action(tid, "seats")
    assert joined["status"] == "playing" and joined["game"]["you"] == 2
    hana_view = (await hana.table(tid))["game"]
    assert hana_view["you"] == 1 and hana_view["hand"] != joined["game"]["hand"]


async def test_the_host_starts_with_two_people_and_not_before(anon: Api) -> None:
    hana, bob = await anon.guest("Hana"), await anon.guest("Bob")
    tid = (await hana.create_table(seats=5))["table_id"]
    assert_problem(await hana.table_action(tid, "start"), 409, "not-enough-people")
    await bob.ok_table_action(tid, "seats")
    assert_problem(await bob.table_action(tid, "start"), 403, "not-host")
    assert_problem(await bob.table_action(tid, "bees"), 403, "not-host")
    started = await hana.ok_table_action(tid, "start")
    assert started["status"] == "playing" and len(started["game"]["seats"]) == 2


async def test_seat_refusals(anon: Api) -> None:
    hana, bob, cat = await anon.guest("Hana"), await anon.guest("Bob"), await anon.guest("Cat")
    tid = (await hana.create_table(seats=3))["table_id"]
    assert_problem(await hana.table_action(tid, "seats"), 409, "already-seated")
    await bob.ok_table_action(tid, "start" if False else "seats")
    assert_problem(await cat.table_action(tid, "leave"), 403, "not-seated")
    assert_problem(await cat.table_action(tid, "games"), 403, "not-seated")
    await cat.ok_table_action(tid, "seats")  # full: the game starts
    dan = await anon.guest("Dan")
    assert_problem(await dan.table_action(tid, "seats"), 409, "game-in-progress")


async def test_a_token_for_one_table_is_useless_at_another(anon: Api) -> None:
    hana, bob, cat = await anon.guest("Hana"), await anon.guest("Bob"), await anon.guest("Cat")
    first = await hana.create_table(seats=2)
    game1 = (await bob.ok_table_action(first["table_id"], "seats"))["game"]
    second = await cat.create_table(seats=2)
    await (await anon.guest("Dan")).ok_table_action(second["table_id"], "seats")
    # Cat sits at the second table: at the first she can see the table and watch the game as
    # a spectator (no seat, no hand), never play in it.
    assert (await cat.table(first["table_id"]))["game"] is None
    watched = await cat.game(game1["game_id"])
    assert watched["you"] is None and watched["hand"] == [] and watched["forecast"] == []
    assert_problem(await cat.move(game1["game_id"], type="confirm", bee=game1["hand"][0]), 403)
    assert_problem(await cat.table_action(first["table_id"], "leave"), 403, "not-seated")
    assert_problem(await cat.table_action(first["table_id"], "start"), 403, "not-host")


async def test_host_leaving_hands_over_and_an_empty_table_closes(anon: Api) -> None:
    hana, bob = await anon.guest("Hana"), await anon.guest("Bob")
    tid = (await hana.create_table(seats=4))["table_id"]
    await bob.ok_table_action(tid, "seats")
    after = await hana.ok_table_action(tid, "leave")
    assert after["host"] != hana_id(after, "Hana") and [s["name"] for s in after["seats"]] == [
        "Bob"
    ]
    assert after["seats"][0]["player_id"] == after["host"]
    closed = await bob.ok_table_action(tid, "leave")
    assert closed["status"] == "closed"
    assert all(t["table_id"] != tid for t in (await bob.lobby(limit=100))["tables"])
    assert_problem(await hana.table_action(tid, "seats"), 409, "table-closed")


def hana_id(table: dict[str, object], name: str) -> object:
    return next((s["player_id"] for s in table["seats"] if s["name"] == name), None)  # type: ignore[attr-defined]


async def test_leaving_mid_game_and_the_last_person_standing_wins(anon: Api) -> None:
    hana, bob, cat = await anon.guest("Hana"), await anon.guest("Bob"), await anon.guest("Cat")
    tid = (await hana.create_table(seats=4))["table_id"]
    await bob.ok_table_action(tid, "seats")
    await cat.ok_table_action(tid, "seats")
    game = (await hana.ok_table_action(tid, "bees"))["game"]
    gid = game["game_id"]
    await bob.ok_move(gid, type="confirm", bee=(await bob.game(gid))["hand"][0])
    await bob.ok_table_action(tid, "leave")
    view = await hana.game(gid)
    assert view["seats"][1]["status"] == "left" and view["phase"] != "ended"
    assert_problem(await bob.move(gid, type="tap", bee=1), 409, "seat-not-playing")
    await cat.ok_table_action(tid, "leave")
    final = await hana.game(gid)
    assert final["phase"] == "ended"
    assert final["result"] == {
        "scores": [
            {"seat": n, "stings": final["result"]["stings"][n - 1], "winner": n == 1}
            for n in range(1, 5)
        ],
        "stings": final["result"]["stings"],
        "winners": [1],
        "reason": "last_person_standing",
    }
    table = await hana.table(tid)
    assert table["status"] == "between_games"
    assert_problem(await hana.table_action(tid, "games"), 409, "not-enough-people")


async def test_the_lobby_lists_open_tables_with_filters_and_pages(anon: Api) -> None:
    hana = await anon.guest("Hana")
    made = [(await hana.create_table(seats=2 + i))["table_id"] for i in range(3)]
    page = await hana.lobby(limit=2)
    assert len(page["tables"]) == 2 and page["next_offset"] == 2
    newest = page["tables"][0]
    assert newest["table_id"] == made[-1] and newest["host_name"] == "Hana"
    assert newest["seats_taken"] == 1 and newest["capacity"] == 4 and newest["stake"] == 0
    assert newest["status"] == "open"
    full_tid = made[0]
    await (await anon.guest("Bob")).ok_table_action(full_tid, "seats")
    free = await hana.lobby(has_free_seat="true", limit=100)
    assert full_tid not in {t["table_id"] for t in free["tables"]}
    buy_in = (await hana.lobby(stake="buy_in", limit=100))["tables"]
    assert all(t["stake"] > 0 for t in buy_in) and not set(made) & {t["table_id"] for t in buy_in}


async def test_a_buy_in_table_needs_an_account(anon: Api) -> None:
    hana = await anon.guest("Hana")
    response = await hana.client.post("/tables", json={"stake": 100}, headers=hana.headers)
    assert_problem(response, 403, "buy-in-needs-account")
