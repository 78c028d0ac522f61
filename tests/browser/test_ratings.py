"""Issue 43 in the browser: a rated table opened from the lobby's form, the rating on the
profile, the leaderboard by rating and the lobby, and My games' history of played games with
the rating change and the links to the replay and the log."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.browser.board import account, guest


def _auth(person: dict[str, Any]) -> dict[str, str]:
    return {"authorization": f"Bearer {person['token']}"}


def _sign_in(page: Any, base: str, person: dict[str, Any]) -> None:
    page.goto(base + "/")
    page.evaluate(
        "s => localStorage.setItem('swarm.board.session', JSON.stringify(s))",
        {
            "token": person["token"],
            "player_id": person["player_id"],
            "name": person["name"],
            "registered": True,
        },
    )


def _play_to_the_end(base: str, people: dict[int, dict[str, Any]], game_id: str) -> None:
    """Each person confirms their lowest bee when awaited, and takes the cheapest stem."""
    for _ in range(400):
        progressed = False
        for seat, person in people.items():
            view = httpx.get(f"{base}/games/{game_id}", headers=_auth(person)).json()
            if view["phase"] == "ended":
                return
            move = None
            if view["phase"] == "choosing" and view["choice"]["yours"]:
                move = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
            elif view["phase"] == "picking" and view.get("confirmed") is None:
                move = {"type": "confirm", "bee": view["hand"][0]}
            if move is not None:
                moved = httpx.post(
                    f"{base}/games/{game_id}/moves",
                    json={**move, "move_id": f"m-{seat}-{view['version']}"},
                    headers=_auth(person),
                )
                progressed = progressed or moved.status_code == 200
        assert progressed, "nobody could move"
    raise AssertionError("the game did not end")


def test_a_rated_game_shows_on_the_profile_leaderboard_lobby_and_history(
    page: Any, board_url: str
) -> None:
    ann, ben = account(board_url, "Ann"), account(board_url, "Ben")
    _sign_in(page, board_url, ann)
    page.goto(board_url + "/#/lobby")
    form = page.get_by_role("form", name="Open a table")
    form.get_by_label("Seats").select_option("2")
    form.get_by_label("Rated: the games change ratings").check()
    form.get_by_role("button", name="Open the table").click()
    page.wait_for_url(re.compile(r".*#/table/.+"))
    table_id = page.url.rsplit("/", 1)[-1]
    table = httpx.get(f"{board_url}/tables/{table_id}", headers=_auth(ann)).json()
    assert table["rated"] is True
    joined = httpx.post(f"{board_url}/tables/{table_id}/seats", json={}, headers=_auth(ben))
    game_id = joined.json()["game"]["game_id"]
    _play_to_the_end(board_url, {1: ann, 2: ben}, game_id)
    me = httpx.get(f"{board_url}/me", headers=_auth(ann)).json()
    points = me["rating"]["points"]
    assert me["rating"]["games"] == 1

    page.goto(board_url + "/#/profile")
    page.locator(".stats").wait_for()
    stats = dict(
        zip(
            page.locator(".stats dt").all_inner_texts(),
            page.locator(".stats dd").all_inner_texts(),
            strict=True,
        )
    )
    assert stats["RATING"] == f"{points}?"  # provisional after one game

    page.goto(board_url + "/#/leaderboard/rating")
    page.get_by_role("link", name="By rating").wait_for()
    row = page.locator("tr.me")
    row.wait_for()
    assert f"{points}?" in row.inner_text()

    page.goto(board_url + "/#/lobby")
    listed = page.locator(f'tr[data-table="{table_id}"]')
    listed.wait_for()
    assert "rated" in listed.inner_text() and "⌀" in listed.inner_text()

    page.goto(board_url + "/#/games")
    past = page.locator(f'.past-game[data-game="{game_id}"]')
    past.wait_for()
    text = past.inner_text()
    assert "Rated · 2 seats" in text and ben["name"] in text
    change = points - 1500
    assert f"{'+' if change >= 0 else ''}{change} → {points}?" in text
    assert past.get_by_role("link", name=re.compile("^Replay")).get_attribute("href") == (
        f"#/replay/{game_id}"
    )
    # The replay shows each person's rating before and after the game, and the change.
    past.get_by_role("link", name=re.compile("^Replay")).click()
    ratings = page.get_by_role("region", name="Ratings")
    ratings.locator("li").nth(1).wait_for()  # drawn once the first step is shown
    lines = ratings.locator("li").all_inner_texts()
    assert lines[0] == f"You: 1500 → {points}? ({'+' if change >= 0 else ''}{change})", lines
    assert lines[1].startswith(f"{ben['name']}: 1500 → "), lines
    page.goto(board_url + "/#/games")
    page.locator(f'.past-game[data-game="{game_id}"]').wait_for()
    page.get_by_label("Which games").select_option("casual")
    page.get_by_text("No finished game yet.").wait_for()
    assert page.locator(f'.past-game[data-game="{game_id}"]').count() == 0


def test_the_leave_prompt_at_a_rated_table_says_what_leaving_costs(
    page: Any, board_url: str
) -> None:
    ann, ben = account(board_url, "Ann"), account(board_url, "Ben")
    body = {"seats": 2, "stake": 50, "turn_seconds": 600, "choice_seconds": 600, "rated": True}
    table = httpx.post(f"{board_url}/tables", json=body, headers=_auth(ann)).json()
    joined = httpx.post(
        f"{board_url}/tables/{table['table_id']}/seats", json={}, headers=_auth(ben)
    )
    game_id = joined.json()["game"]["game_id"]
    _sign_in(page, board_url, ann)
    page.goto(f"{board_url}/#/game/{game_id}")
    page.get_by_role("button", name="Leave").click()
    words = page.get_by_role("group", name="Leave this game?").inner_text()
    assert "Your 💰50 buy-in stays in the pot." in words
    assert f"{ben['name']} wins at once." in words
    assert "Your rating counts it as last place." in words


def test_play_now_from_the_lobby_waits_at_a_table_the_next_asker_joins(
    page: Any, board_url: str
) -> None:
    ann, ben = account(board_url, "Ann"), account(board_url, "Ben")
    _sign_in(page, board_url, ann)
    page.goto(board_url + "/#/lobby")
    form = page.get_by_role("form", name="Open a table")
    form.get_by_label("Seats").select_option("5")  # a kind no other test asks for
    form.get_by_label("Rated: the games change ratings").check()
    form.get_by_role("button", name="▶ Play now").click()
    page.wait_for_url(re.compile(r".*#/table/.+"))
    table_id = page.url.rsplit("/", 1)[-1]
    seated = httpx.post(
        f"{board_url}/play-now", json={"seats": 5, "rated": True}, headers=_auth(ben)
    ).json()
    assert seated["table_id"] == table_id and seated["you"] == 2


def _sign_in_guest(page: Any, base: str, person: dict[str, Any]) -> None:
    page.goto(base + "/")
    page.evaluate(
        "s => localStorage.setItem('swarm.board.session', JSON.stringify(s))",
        {"token": person["token"], "player_id": person["player_id"], "name": person["name"]},
    )


def _play_now(page: Any, base: str, seats: int) -> str:
    page.goto(base + "/#/lobby")
    form = page.get_by_role("form", name="Open a table")
    form.get_by_label("Seats").select_option(str(seats))
    form.get_by_role("button", name="▶ Play now").click()
    page.wait_for_url(re.compile(r".*#/table/.+"))
    return str(page.url.rsplit("/", 1)[-1])


def test_play_now_alone_offers_a_game_with_bees_when_nobody_comes(
    page: Any, board_url: str
) -> None:
    """Issue 43, item 4: nobody comes to the table Play now opened. The board says how long
    Ann has waited and, after PATIENCE_SECONDS, offers bees: alone she cannot fill an online
    table (seed §9), so she plays the same seats on her own against them (seed §8)."""
    ann = guest(board_url, "Ann")  # a guest: no password to hash on a loaded machine
    page.clock.install()
    _sign_in_guest(page, board_url, ann)
    table_id = _play_now(page, board_url, 7)  # a kind no other test asks for
    waiting = page.locator(".waiting")
    waiting.get_by_text("Waiting for others").wait_for()
    assert page.get_by_role("group", name="Nobody has come").count() == 0
    page.clock.fast_forward(31_000)
    offer = page.get_by_role("group", name="Nobody has come")
    offer.wait_for()
    assert re.search(r"Nobody has come in 0:3\d\. Play against bees instead", offer.inner_text())
    offer.get_by_role("button", name="🐝 Play with bees").click()
    page.wait_for_url(re.compile(r".*#/game/.+"))
    page.locator(".hand button.bee").first.wait_for()
    assert page.locator(".scores .seat").count() == 7
    left = httpx.get(f"{board_url}/tables/{table_id}", headers=_auth(ann)).json()
    assert left["status"] == "closed"  # the waiting table is gone from the lobby


def test_play_now_with_two_people_offers_to_fill_with_bees(page: Any, board_url: str) -> None:
    ann, ben = guest(board_url, "Ann"), guest(board_url, "Ben")
    page.clock.install()
    _sign_in_guest(page, board_url, ann)
    table_id = _play_now(page, board_url, 6)  # a kind no other test asks for
    seated = httpx.post(f"{board_url}/play-now", json={"seats": 6}, headers=_auth(ben)).json()
    assert seated["table_id"] == table_id and seated["you"] == 2
    page.locator(".seat-list").get_by_text(ben["name"]).wait_for()
    page.clock.fast_forward(31_000)
    offer = page.get_by_role("group", name="Nobody has come")
    offer.wait_for()
    assert "fill the empty seats with bees and start" in offer.inner_text()
    offer.get_by_role("button", name="🐝 Fill with bees now").click()
    page.wait_for_url(re.compile(r".*#/game/.+"))
    page.locator(".hand button.bee").first.wait_for()
    names = page.locator(".scores .seat").all_inner_texts()
    assert len(names) == 6 and sum("🐝" in n for n in names) == 4, names
