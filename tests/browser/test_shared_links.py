"""Issue 44, item 1: a link someone shares works for a person who has never been here. A fresh
browser opening a game's replay, the game itself or its Meadow log is asked for a name (no raw
401), then sees what was shared; someone else's solo game says whose it is and where to go."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.browser.board import guest, play_lowest
from tests.browser.replay import finished_game


def _auth(person: dict[str, Any]) -> dict[str, str]:
    return {"authorization": f"Bearer {person['token']}"}


@pytest.fixture(scope="module")
def online_game(board_url: str) -> str:
    """A free 2-seat online game, played to its end by Ada and Bo through the API."""
    ada, bo = guest(board_url, "Ada"), guest(board_url, "Bo")
    table = httpx.post(f"{board_url}/tables", json={"seats": 2}, headers=_auth(ada))
    table.raise_for_status()
    joined = httpx.post(
        f"{board_url}/tables/{table.json()['table_id']}/seats", json={}, headers=_auth(bo)
    )
    joined.raise_for_status()
    game = str(joined.json()["game"]["game_id"])
    assert play_lowest(board_url, {1: ada, 2: bo}, game)["phase"] == "ended"
    return game


def _newcomer_names_themself(page: Any, lead: str) -> None:
    """The name box, saying what was shared, and no refusal on screen; then a name."""
    page.get_by_role("heading", name="Who's playing?").wait_for()
    assert lead in page.locator(".identity .lead").inner_text()
    assert page.locator("#problem").inner_text() == ""
    assert "bearer" not in page.locator("body").inner_text().lower()
    page.get_by_role("textbox").fill("Newcomer")
    page.get_by_role("button", name="Play as guest").click()


def test_a_replay_link_asks_a_newcomer_for_a_name_then_replays(
    page: Any, board_url: str, online_game: str
) -> None:
    page.goto(f"{board_url}/#/replay/{online_game}")
    _newcomer_names_themself(page, "shared a game's replay with you")
    page.locator(".replay-step").wait_for()
    assert page.locator(".replay-seat").count() == 2
    assert page.locator("#problem").inner_text() == ""


def test_a_game_link_and_its_meadow_log_open_for_a_newcomer(
    page: Any, board_url: str, online_game: str
) -> None:
    page.goto(f"{board_url}/#/game/{online_game}/meadow")
    _newcomer_names_themself(page, "shared a game with you")
    page.locator(".game-bar .turn").wait_for()
    assert page.locator(".game-bar .turn").inner_text() == "Game over"
    assert page.locator("#meadow-panel").is_visible()
    assert page.locator("#problem").inner_text() == ""


def test_an_expired_identity_on_a_shared_link_asks_for_a_name_again(
    page: Any, board_url: str, online_game: str
) -> None:
    page.evaluate(
        "s => localStorage.setItem('swarm.board.session', JSON.stringify(s))",
        {"token": "not-a-token-any-more", "player_id": "x", "name": "Old", "registered": False},
    )
    page.goto(f"{board_url}/#/replay/{online_game}")
    page.get_by_role("heading", name="Who's playing?").wait_for()
    page.get_by_role("textbox").fill("Again")
    page.get_by_role("button", name="Play as guest").click()
    page.locator(".replay-step").wait_for()


def test_someone_elses_solo_game_says_whose_it_is(page: Any, board_url: str) -> None:
    _, solo = finished_game(board_url, players=2)
    page.goto(f"{board_url}/#/replay/{solo}")
    _newcomer_names_themself(page, "shared a game's replay with you")
    problem = page.locator("#problem .problem")
    problem.wait_for()
    assert "solo game is its player's alone" in problem.inner_text()
