"""Issue 25: My games (listMyGames), Watch from the lobby, and the animation speed setting."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.browser.board import guest, play_lowest, play_turn, start_solo, wait_idle


def _auth(person: dict[str, Any]) -> dict[str, str]:
    return {"authorization": f"Bearer {person['token']}"}


def _sign_in(page: Any, base: str, person: dict[str, Any]) -> None:
    page.goto(base + "/")
    page.evaluate(
        "s => localStorage.setItem('swarm.board.session', JSON.stringify(s))",
        {"token": person["token"], "player_id": person["player_id"], "name": person["name"]},
    )


def test_my_games_lists_live_games_first_with_their_log_and_replay(
    page: Any, board_url: str
) -> None:
    hana, bob = guest(board_url, "Hana"), guest(board_url, "Bob")
    table = httpx.post(
        f"{board_url}/tables", json={"seats": 2, "turn_seconds": 60}, headers=_auth(hana)
    ).json()
    joined = httpx.post(
        f"{board_url}/tables/{table['table_id']}/seats", json={}, headers=_auth(bob)
    ).json()
    ended = joined["game"]["game_id"]
    httpx.post(f"{board_url}/tables/{table['table_id']}/leave", headers=_auth(bob))

    _sign_in(page, board_url, hana)
    page.goto(board_url + "/#/")
    live = start_solo(page, players=2)
    play_turn(page)

    page.get_by_role("link", name="My games").click()
    page.locator(".my-table").nth(1).wait_for()
    games = page.locator(".my-game").evaluate_all("gs => gs.map(g => g.dataset.game)")
    assert games.index(live) < games.index(ended), "live games come first"
    finished = page.locator(f'.my-game[data-game="{ended}"]')
    assert finished.get_by_role("link", name=re.compile("^Replay")).get_attribute("href") == (
        f"#/replay/{ended}"
    )
    playing = page.locator(f'.my-game[data-game="{live}"]')
    assert playing.get_by_role("link", name=re.compile("^Replay")).count() == 0
    finished.get_by_role("link", name=re.compile("^The Meadow log")).click()
    page.locator("#meadow-panel").wait_for()
    assert page.url.endswith(f"#/game/{ended}/meadow")
    page.goto(board_url + "/#/games")
    page.locator(f'.my-game[data-game="{live}"]').get_by_role(
        "link", name=re.compile("^Open")
    ).click()
    page.locator(".hand button.bee").first.wait_for()
    assert wait_idle(page) in ("picking", "choosing")
    assert page.url.endswith(f"#/game/{live}")


def test_a_running_table_can_be_watched_from_the_lobby(page: Any, board_url: str) -> None:
    hana, bob = guest(board_url, "Hanna"), guest(board_url, "Boris")
    table = httpx.post(
        f"{board_url}/tables", json={"seats": 2, "turn_seconds": 60}, headers=_auth(hana)
    ).json()
    game = httpx.post(
        f"{board_url}/tables/{table['table_id']}/seats", json={}, headers=_auth(bob)
    ).json()["game"]["game_id"]
    _sign_in(page, board_url, guest(board_url, "Sam"))
    page.goto(board_url + "/#/lobby")
    page.get_by_role("button", name="Watch Hanna's game").click()
    page.wait_for_function("id => location.hash === `#/game/${id}`", arg=game)
    page.locator(".game-bar .watching").wait_for()
    assert "You are watching this game." in page.locator(".banner").inner_text()
    assert page.locator(".hand-area").is_hidden()  # a spectator has no hand (not an empty box)
    assert page.locator(".scores .seat").count() == 2


def test_play_again_takes_the_spectator_along(page: Any, board_url: str) -> None:
    """Issue 43, item 5: Sam watches Hanna and Boris's game to its end; when Boris plays again,
    Sam's board follows the table to the new game, still as a spectator."""
    hana, bob = guest(board_url, "Hanna"), guest(board_url, "Boris")
    table = httpx.post(
        f"{board_url}/tables",
        json={"seats": 2, "turn_seconds": 600, "choice_seconds": 600},
        headers=_auth(hana),
    ).json()
    tid = table["table_id"]
    game = httpx.post(f"{board_url}/tables/{tid}/seats", json={}, headers=_auth(bob)).json()[
        "game"
    ]["game_id"]
    _sign_in(page, board_url, guest(board_url, "Sam"))
    page.goto(f"{board_url}/#/game/{game}")
    page.locator(".game-bar .watching").wait_for()
    play_lowest(board_url, {1: hana, 2: bob}, game)
    page.locator(".result").wait_for(timeout=20_000)
    assert "you follow it to the next game" in page.locator(".result .following").inner_text()
    again = httpx.post(f"{board_url}/tables/{tid}/games", json={}, headers=_auth(bob))
    again.raise_for_status()
    new = again.json()["game"]["game_id"]
    page.wait_for_function("id => location.hash === `#/game/${id}`", arg=new, timeout=20_000)
    page.locator(".game-bar .watching").wait_for()
    assert "You are watching this game." in page.locator(".banner").inner_text()
    assert page.locator(".hand-area").is_hidden()


def test_a_finished_game_opened_later_keeps_its_spectator(page: Any, board_url: str) -> None:
    """Who opens a game already ended (a shared link) stays on it when the table plays on."""
    hana, bob = guest(board_url, "Hanna"), guest(board_url, "Boris")
    table = httpx.post(
        f"{board_url}/tables",
        json={"seats": 2, "turn_seconds": 600, "choice_seconds": 600},
        headers=_auth(hana),
    ).json()
    tid = table["table_id"]
    game = httpx.post(f"{board_url}/tables/{tid}/seats", json={}, headers=_auth(bob)).json()[
        "game"
    ]["game_id"]
    play_lowest(board_url, {1: hana, 2: bob}, game)
    _sign_in(page, board_url, guest(board_url, "Sam"))
    page.goto(f"{board_url}/#/game/{game}")
    page.locator(".result").wait_for(timeout=20_000)
    assert page.locator(".result .following").count() == 0
    httpx.post(f"{board_url}/tables/{tid}/games", json={}, headers=_auth(bob)).raise_for_status()
    page.wait_for_timeout(1500)  # the table's stream would have moved a live spectator by now
    assert page.url.endswith(f"#/game/{game}")


def test_the_animation_speed_is_kept_in_the_browser(page: Any) -> None:
    assert page.get_by_role("radio", name="Normal").is_checked()
    page.get_by_role("radio", name="Off").check()
    page.reload()
    assert page.get_by_role("radio", name="Off").is_checked()
    assert page.evaluate("localStorage.getItem('swarm.board.speed')") == "off"
    assert page.evaluate("async () => (await import('/dom.js')).motionMs(480)") == 0
    page.get_by_role("radio", name="Fast").check()
    # `page` runs with prefers-reduced-motion: a blink, whatever the setting.
    assert page.evaluate("async () => (await import('/dom.js')).motionMs(480)") == 90
