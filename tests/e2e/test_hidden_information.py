"""No response shows a player a bee the rules hide from them, at any point of a game."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.e2e.api_client import Api, first_of, without_server_time

HIDDEN_UNTIL_REVEALED = {"bee_tapped", "pick_confirmed"}


def assert_nothing_hidden_leaks(log: dict[str, Any], me: int) -> None:
    for event in log["events"]:
        data = event["data"]
        if event["type"] == "game_started":
            for seat, hand in enumerate(data["hands"], start=1):
                assert (hand is None) == (seat != me), (seat, hand)
        if event["type"] in HIDDEN_UNTIL_REVEALED and data["seat"] != me:
            assert data["bee"] is None, event


async def test_no_view_or_log_shows_another_hand_or_an_unrevealed_pick(ada: Api) -> None:
    for players in (2, 5, 8):
        game = (await ada.solo_table(players=players))["game"]
        gid = game["game_id"]
        view = game
        while view["phase"] != "ended":
            assert set(view) >= {"hand", "seats"} and view["you"] == 1
            # The view has one hand, the caller's; seats show status (and a bee's level) and the
            # piles taken off the stems (public), never a bee of a hand.
            public = {"seat", "name", "kind", "stings", "bees_taken", "status", "pile", "level"}
            assert all(set(seat) == public | {"pile_stings"} for seat in view["seats"])
            assert all(len(seat["pile"]) == seat["bees_taken"] for seat in view["seats"])
            assert_nothing_hidden_leaks(await ada.events(gid), me=1)
            if view["phase"] == "choosing":
                view = await ada.ok_move(gid, type="take_stem", stem=view["choice"]["cheapest"])
            else:
                await ada.ok_move(gid, type="tap", bee=view["hand"][-1])
                assert_nothing_hidden_leaks(await ada.events(gid), me=1)
                view = await ada.ok_move(gid, type="confirm", bee=view["hand"][0])
        # Once the game is over, the deal is published in full.
        final = await ada.events(gid)
        assert all(hand is not None for hand in first_of(final, "game_started")["data"]["hands"])


async def test_the_same_move_sent_concurrently_is_written_once(ada: Api) -> None:
    game = (await ada.solo_table())["game"]
    gid, bee = game["game_id"], game["hand"][0]
    responses = await asyncio.gather(
        *(ada.move(gid, type="confirm", bee=bee, move_id="race") for _ in range(6))
    )
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
    bodies = [without_server_time(r.json()) for r in responses]
    assert all(body == bodies[0] for body in bodies)
    log = await ada.events(gid)
    confirms = [
        e for e in log["events"] if e["type"] == "pick_confirmed" and e["data"]["seat"] == 1
    ]
    assert len(confirms) == 1
