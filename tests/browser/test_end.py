"""Issue 25, items 2-6 and 11: the end of a game reads right. A finished game opened later (a
reload, a stranger's link) checks its deal; an abandoned game, a last person standing and a
shared win have the right headline; Play again is offered only when it can work, and at a buy-in
table says it has none; the result can be closed to study the board, and opened again."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx

from tests.browser.board import account as _account
from tests.browser.board import guest, play_lowest, verdict
from tests.browser.reach import SIZES


def _auth(person: dict[str, Any]) -> dict[str, str]:
    return {"authorization": f"Bearer {person['token']}"}


def _two_at_a_table(
    base: str, host: dict[str, Any], other: dict[str, Any], **settings: Any
) -> tuple[str, str]:
    """A 2-seat online table: full when the second person joins, so its game starts."""
    table = httpx.post(f"{base}/tables", json={"seats": 2, **settings}, headers=_auth(host))
    table.raise_for_status()
    table_id = table.json()["table_id"]
    joined = httpx.post(f"{base}/tables/{table_id}/seats", json={}, headers=_auth(other))
    joined.raise_for_status()
    return table_id, str(joined.json()["game"]["game_id"])


def _open_as(browser: Any, base: str, person: dict[str, Any], game: str) -> tuple[Any, Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(base + "/")
    page.evaluate(
        "s => localStorage.setItem('swarm.board.session', JSON.stringify(s))",
        {
            "token": person["token"],
            "player_id": person["player_id"],
            "name": person["name"],
            "registered": bool(person.get("registered")),
        },
    )
    page.goto(f"{base}/#/game/{game}")
    page.locator(".game-bar .turn").wait_for()
    page.errors = errors
    return ctx, page


def _wait_ended(base: str, person: dict[str, Any], game: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = httpx.get(f"{base}/games/{game}", headers=_auth(person)).json()
        if view["phase"] == "ended":
            return view
        time.sleep(0.2)
    raise AssertionError("the game did not end")


def test_a_finished_game_reloaded_and_opened_by_a_stranger_checks_its_deal(
    browser: Any, board_url: str
) -> None:
    hana, bob = guest(board_url, "Hana"), guest(board_url, "Bob")
    table_id, game = _two_at_a_table(board_url, hana, bob, turn_seconds=60, choice_seconds=60)
    httpx.post(f"{board_url}/tables/{table_id}/leave", headers=_auth(bob)).raise_for_status()
    _wait_ended(board_url, hana, game)

    ctx, page = _open_as(browser, board_url, hana, game)
    try:
        result = page.locator(".result")
        result.wait_for()
        assert page.locator("#result-title").inner_text() == "You won!"
        assert "last person standing" in result.locator(".reason").inner_text()
        # Bob is gone: Play again would need a second person, so it is not offered (item 4).
        assert result.get_by_role("button", name=re.compile("^Play again")).count() == 0
        assert verdict(page) == "ok"  # opened after the end, the deal is still checked (item 2)
        assert "✔ Fair deal" in result.locator(".verdict-line").inner_text()
        page.reload()
        page.locator(".result").wait_for()
        assert verdict(page) == "ok"

        # The result can be closed to study the final board, and opened again (item 11).
        assert page.evaluate("document.activeElement.closest('.result') !== null")
        page.keyboard.press("Escape")
        page.locator(".result").wait_for(state="detached")
        stem = page.locator(".stem").first.bounding_box()
        assert page.evaluate(
            "([x, y]) => document.elementFromPoint(x, y).closest('.stem') !== null",
            [stem["x"] + 20, stem["y"] + 20],
        )
        page.get_by_role("button", name="🏆 Result").click()
        page.locator(".result").wait_for()
        page.get_by_role("button", name="Close the result to study the board").click()
        page.locator(".result").wait_for(state="detached")
        page.get_by_role("button", name="🏆 Result").click()
        # While it shows, the menu above it still works.
        link = page.get_by_role("link", name="Leaderboard").bounding_box()
        assert page.evaluate(
            "([x, y]) => document.elementFromPoint(x, y).closest('nav') !== null",
            [link["x"] + link["width"] / 2, link["y"] + link["height"] / 2],
        )
        assert not page.errors
    finally:
        ctx.close()

    stranger = guest(board_url, "Sam")
    ctx, page = _open_as(browser, board_url, stranger, game)
    try:
        page.locator(".result").wait_for()
        assert page.locator("#result-title").inner_text() == "Hana won."
        assert verdict(page) == "ok"
        assert "did not see this game before it ended" in page.locator(".verdict").inner_text()
        assert page.locator(".result").get_by_role("button", name=re.compile("^Play")).count() == 0
        assert "Watching" in page.locator(".game-bar").inner_text()
        assert not page.errors
    finally:
        ctx.close()


def test_an_abandoned_buy_in_game_reads_so_and_plays_again_with_no_buy_in(
    browser: Any, board_url: str
) -> None:
    """Nobody picks for 3 turns (a 1 s clock): abandoned, nobody won, every buy-in back. Both
    still sit at the table, so Play again can work, and says the next game has no buy-in."""
    ada, cy = _account(board_url, "Ada"), _account(board_url, "Cy")
    table_id, game = _two_at_a_table(board_url, ada, cy, stake=10, turn_seconds=1, choice_seconds=1)
    ctx, page = _open_as(browser, board_url, ada, game)
    try:
        assert "💰10 buy-in" in page.locator(".game-bar .mode").inner_text()
        _wait_ended(board_url, ada, game)
        result = page.locator(".result")
        result.wait_for(timeout=20_000)
        assert page.locator("#result-title").inner_text() == "Nobody won: the game was abandoned."
        reason = result.locator(".reason").inner_text()
        assert "buy-in goes back" in reason
        # The rule's number as the server serves it (GameView.idle_turns_to_end), not the board's.
        assert "3 turns in a row passed with nobody picking" in reason, reason
        # What it paid, from the view: the buy-in back, and no reward for an abandoned game.
        paid = result.locator(".paid").inner_text()
        assert "Your 10 buy-in is back" in paid and "earns no coins or XP" in paid
        assert "XP" not in paid.replace("no coins or XP", "")
        again = result.get_by_role("button", name="Play again (no buy-in)")
        again.wait_for()
        again.click()
        page.wait_for_function("id => !location.hash.endsWith(id)", arg=game)
        page.locator(".hand button.bee").first.wait_for()
        assert page.locator(".game-bar .mode").inner_text() == "Online · Play again, no buy-in"
        assert not page.errors
    finally:
        ctx.close()
    httpx.post(f"{board_url}/tables/{table_id}/leave", headers=_auth(cy))


def test_a_shared_win_names_everyone_who_shares_it(browser: Any, board_url: str) -> None:
    """A tie is rare in a real deal, so the finished game's view is answered with two winners
    (as the service answers a tie): the headline names who shares the win."""
    hana, bob = guest(board_url, "Hana"), guest(board_url, "Bob")
    table_id, game = _two_at_a_table(board_url, hana, bob, turn_seconds=60, choice_seconds=60)
    httpx.post(f"{board_url}/tables/{table_id}/leave", headers=_auth(bob)).raise_for_status()
    _wait_ended(board_url, hana, game)

    def tie(route: Any) -> None:
        response = route.fetch()
        view = response.json()
        for seat in view["seats"]:
            seat["status"] = "waiting"
        view["result"]["winners"] = [1, 2]
        view["result"]["stings"] = [4, 4]
        view["result"]["scores"] = [{"seat": s, "stings": 4, "winner": True} for s in (1, 2)]
        view["result"]["reason"] = "finished"
        route.fulfill(response=response, json=view)

    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    try:
        page = ctx.new_page()
        page.route(f"**/games/{game}", tie)
        page.goto(board_url + "/")
        page.evaluate(
            "s => localStorage.setItem('swarm.board.session', JSON.stringify(s))",
            {"token": hana["token"], "player_id": hana["player_id"], "name": "Hana"},
        )
        page.goto(f"{board_url}/#/game/{game}")
        page.locator(".result").wait_for()
        assert page.locator("#result-title").inner_text() == "You share the win with Bob!"
        assert page.locator(".result .standings li.winner").count() == 2
    finally:
        ctx.close()


_RESULT_IN_VIEW = """() => {
  const misses = [];
  const menu = document.querySelector('header.top').getBoundingClientRect();
  const box = document.querySelector('.result').getBoundingClientRect();
  if (box.top < menu.bottom || box.bottom > innerHeight + .5) misses.push('the dialog');
  if (document.scrollingElement.scrollWidth > innerWidth) misses.push('the page is too wide');
  for (const el of document.querySelectorAll('#result-title, .close-result, .result-actions > *')) {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!hit || !(el === hit || el.contains(hit))) misses.push(el.textContent.trim());
  }
  return misses;
}"""


def test_an_8_seat_result_keeps_its_head_and_actions_in_view_at_every_size(
    browser: Any, board_url: str
) -> None:
    """8 people at a buy-in table: the result (what it paid, 8 standings, the verdict) sits
    below the menu with its headline, its ✕ and its actions in view at the four sizes; on a
    short window only its middle scrolls. The board under it offers no CONFIRM, and its banner
    says how the game ended."""
    people = {n: _account(board_url, f"P{n}") for n in range(1, 9)}
    table = httpx.post(
        f"{board_url}/tables",
        json={"seats": 8, "stake": 10, "turn_seconds": 600, "choice_seconds": 600},
        headers=_auth(people[1]),
    )
    table.raise_for_status()
    for n in range(2, 9):
        joined = httpx.post(
            f"{board_url}/tables/{table.json()['table_id']}/seats",
            json={},
            headers=_auth(people[n]),
        )
        joined.raise_for_status()
    game = joined.json()["game"]["game_id"]
    end = play_lowest(board_url, people, game)
    ctx, page = _open_as(browser, board_url, people[1], game)
    try:
        page.locator(".result .paid", has_text="Balance").wait_for(timeout=20_000)
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            assert page.evaluate(_RESULT_IN_VIEW) == [], (width, height)
        assert page.locator(".result .standings li").count() == 8
        page.keyboard.press("Escape")
        page.locator(".result").wait_for(state="detached")
        assert page.locator("button.confirm").count() == 0
        assert "every bee has been played" in page.locator(".hand-area").inner_text()
        winners = end["result"]["winners"]
        banner = page.locator(".banner-main").inner_text()
        assert banner.startswith("Game over: ") and ("won" in banner or "share" in banner)
        assert (banner == "Game over: You won!") == (winners == [1])
        assert not page.errors
    finally:
        ctx.close()


def test_a_seat_that_left_reads_last_in_the_standings(browser: Any, board_url: str) -> None:
    """Ada leaves on turn 1 with no stings; Bob and Cy play on. Her stings no longer count, so
    the standings list her last, marked as left, though 0 is the fewest; her board shows the
    bees she never played, with no CONFIRM."""
    ada, bob, cy = _account(board_url, "Ada"), _account(board_url, "Bob"), _account(board_url, "Cy")
    table = httpx.post(
        f"{board_url}/tables",
        json={"seats": 3, "turn_seconds": 600, "choice_seconds": 600},
        headers=_auth(ada),
    )
    table.raise_for_status()
    table_id = table.json()["table_id"]
    httpx.post(
        f"{board_url}/tables/{table_id}/seats", json={}, headers=_auth(bob)
    ).raise_for_status()
    joined = httpx.post(f"{board_url}/tables/{table_id}/seats", json={}, headers=_auth(cy))
    game = joined.json()["game"]["game_id"]
    httpx.post(f"{board_url}/tables/{table_id}/leave", headers=_auth(ada)).raise_for_status()
    play_lowest(board_url, {2: bob, 3: cy}, game)
    ctx, page = _open_as(browser, board_url, ada, game)
    try:
        rows = page.locator(".result .standings li")
        rows.first.wait_for()
        assert rows.last.inner_text().split() == ["You", "0", "stings", "left"]
        assert (
            "You left this game: it earns you nothing."
            in page.locator(".result .paid").inner_text()
        )
        page.keyboard.press("Escape")
        assert page.locator("button.confirm").count() == 0
        assert page.locator(".hand button.bee").count() == 10
        assert (
            "You left this game: these bees stay unplayed."
            in page.locator(".hand-area").inner_text()
        )
        assert not page.errors
    finally:
        ctx.close()


def test_the_last_person_standing_beside_bee_players_reads_right(
    browser: Any, board_url: str
) -> None:
    """Issue 44, item 6: Hana and Bob fill their free table with bee players; Bob's Leave
    prompt says what leaving does (his stings stop counting, Hana wins at once); he leaves.
    Hana's result says that the other person left (not "everyone", the bees still sit there),
    that bee players don't win, and lists her, the winner, first, above any bee with fewer
    stings."""
    hana, bob = guest(board_url, "Hana"), guest(board_url, "Bob")
    table = httpx.post(
        f"{board_url}/tables",
        json={"seats": 4, "turn_seconds": 600, "choice_seconds": 600},
        headers=_auth(hana),
    )
    table.raise_for_status()
    table_id = table.json()["table_id"]
    httpx.post(
        f"{board_url}/tables/{table_id}/seats", json={}, headers=_auth(bob)
    ).raise_for_status()
    started = httpx.post(f"{board_url}/tables/{table_id}/bees", json={}, headers=_auth(hana))
    started.raise_for_status()
    game = str(started.json()["game"]["game_id"])

    ctx, page = _open_as(browser, board_url, bob, game)
    try:
        page.get_by_role("button", name="Leave", exact=True).click()
        words = page.locator(".leave-confirm").inner_text()
        assert "your stings stop counting" in words and "Hana wins at once." in words
        page.get_by_role("button", name="Yes, leave").click()
        page.wait_for_function("() => location.hash === '#/lobby'")
        assert not page.errors
    finally:
        ctx.close()
    _wait_ended(board_url, hana, game)

    ctx, page = _open_as(browser, board_url, hana, game)
    try:
        result = page.locator(".result")
        result.wait_for()
        reason = result.locator(".reason").inner_text()
        assert "Every other person left the table" in reason and "Everyone else" not in reason
        assert "Bee players don't keep a game going, and don't win it." in reason
        rows = result.locator(".standings li")
        assert rows.count() == 4
        assert rows.first.inner_text().split()[0] == "You"
        assert "winner" in rows.first.inner_text()
        assert rows.last.inner_text().split()[0] == "Bob"  # left: last
        assert not page.errors
    finally:
        ctx.close()
