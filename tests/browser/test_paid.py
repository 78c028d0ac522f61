"""Issue 25: the end of an online game says what it paid (the pot won or split, the buy-in back,
the reward's coins and XP, a badge unlocked, the day's cap reached) to whoever opens it, live, after
a reload or from another browser, read from the game view (`pot`, `reward`); and a spectator or
another seat learns nobody's reward or balance."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.browser.board import account as _account
from tests.browser.board import play_lowest
from tests.browser.test_end import _auth, _open_as, _two_at_a_table, _wait_ended


def _me(base: str, person: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{base}/me", headers=_auth(person)).json()
    return body


def _paid(page: Any) -> str:
    paid = page.locator(".result .paid")
    paid.wait_for(timeout=20_000)
    return str(paid.inner_text())


def test_a_won_pot_and_reward_read_the_same_live_after_a_reload_and_to_nobody_else(
    browser: Any, board_url: str
) -> None:
    hana, bob = _account(board_url, "Hana"), _account(board_url, "Bob")
    table_id, game = _two_at_a_table(
        board_url, hana, bob, stake=10, turn_seconds=60, choice_seconds=60
    )
    ctx, page = _open_as(browser, board_url, hana, game)
    try:
        page.locator(".hand button.bee").first.wait_for()
        httpx.post(f"{board_url}/tables/{table_id}/leave", headers=_auth(bob)).raise_for_status()
        page.locator(".result").wait_for(timeout=20_000)
        page.locator(".result .paid", has_text="Balance").wait_for(timeout=20_000)
        me = _me(board_url, hana)
        balance = me["coins"]["balance"]
        assert balance == 1000 - 10 + 20 + 30
        # Her first game: every badge she has is its (a win with no sting is a clean sweep too).
        assert [b["name"] for b in me["badges"]][:2] == ["first_game", "first_win"]
        expected = [
            "💰 +20 coins: the whole pot",
            "💰 +30 reward coins",
            "⭐ +100 XP",
            *(
                f"🏅 New badge: {b['name'].replace('_', ' ')} · {b['description']}"
                for b in me["badges"]
            ),
            f"Balance: 💰 {balance}",
        ]
        assert page.locator(".result .paid li").all_inner_texts() == expected
        page.reload()  # the same, from the view alone
        page.locator(".result .paid", has_text="Balance").wait_for(timeout=20_000)
        assert page.locator(".result .paid li").all_inner_texts() == expected
        assert not page.errors
    finally:
        ctx.close()

    # Bob left: his buy-in stayed in the pot and leaving earns nothing, whatever Hana won.
    ctx, page = _open_as(browser, board_url, bob, game)
    try:
        paid = _paid(page)
        assert "Your 10 buy-in stayed in the pot." in paid
        assert "You left this game: it earns you nothing." in paid
        assert "reward" not in paid and "XP" not in paid and "+30" not in paid
        assert not page.errors
    finally:
        ctx.close()

    # A stranger watching the finished game sees the pot (public), and no one's reward.
    sam = _account(board_url, "Sam")
    ctx, page = _open_as(browser, board_url, sam, game)
    try:
        assert _paid(page).strip() == f"💰 The 20-coin pot: {hana['name']} took 20."
        page.wait_for_timeout(500)
        body = page.locator("body").inner_text()
        assert "reward coins" not in body and "Balance" not in body and "XP" not in body
        assert not page.errors
    finally:
        ctx.close()


def test_a_shared_win_shows_each_winner_their_share_of_the_pot(browser: Any, tied_url: str) -> None:
    ada, cy = _account(tied_url, "Ada"), _account(tied_url, "Cy")
    _, game = _two_at_a_table(tied_url, ada, cy, stake=10, turn_seconds=600, choice_seconds=600)
    end = play_lowest(tied_url, {1: ada, 2: cy}, game)
    assert end["result"]["winners"] == [1, 2]
    for person, other in ((ada, cy["name"]), (cy, ada["name"])):
        ctx, page = _open_as(browser, tied_url, person, game)
        try:
            assert page.locator("#result-title").inner_text() == f"You share the win with {other}!"
            paid = _paid(page)
            assert "💰 +10 coins: your share of the 20-coin pot, split 2 ways" in paid
            assert "💰 +30 reward coins" in paid and "⭐ +100 XP" in paid
            assert not page.errors
        finally:
            ctx.close()


def test_the_days_reward_cap_reached_is_said(browser: Any, board_url: str) -> None:
    """Two accounts play each other until one's reward is cut by the daily cap: that game's
    result says so, with the coins it did grant."""
    fay, gil = _account(board_url, "Fay"), _account(board_url, "Gil")
    table_id, game = _two_at_a_table(board_url, fay, gil, turn_seconds=600, choice_seconds=600)
    people = {1: fay, 2: gil}
    capped: tuple[dict[str, Any], dict[str, Any]] | None = None
    for _ in range(11):
        play_lowest(board_url, people, game)
        for person in people.values():
            view = httpx.get(f"{board_url}/games/{game}", headers=_auth(person)).json()
            if view["reward"]["capped"]:
                capped = (person, view["reward"])
        if capped:
            break
        again = httpx.post(f"{board_url}/tables/{table_id}/games", headers=_auth(fay))
        again.raise_for_status()
        game = again.json()["games"][-1]
    assert capped is not None, "nobody reached the daily cap"
    person, reward = capped
    ctx, page = _open_as(browser, board_url, person, game)
    try:
        paid = _paid(page)
        cut = f"+{reward['coins']} of {reward['coins_earned']} reward coins"
        assert f"today's cap of {reward['daily_cap']} reward coins" in paid
        assert cut in paid if reward["coins"] else "No reward coins" in paid
        assert f"⭐ +{reward['xp']} XP" in paid  # XP is never capped
        assert not page.errors
    finally:
        ctx.close()


def test_a_reward_still_on_its_way_says_so_then_what_it_paid(browser: Any, board_url: str) -> None:
    """The first answers say the reward is `pending` (a delivery still in the outbox): the
    board says it is on its way and asks again until it has arrived."""
    hana, bob = _account(board_url, "Hana"), _account(board_url, "Bob")
    table_id, game = _two_at_a_table(board_url, hana, bob, turn_seconds=60, choice_seconds=60)
    httpx.post(f"{board_url}/tables/{table_id}/leave", headers=_auth(bob)).raise_for_status()
    _wait_ended(board_url, hana, game)
    answers = {"pending": 0}

    def pending(route: Any) -> None:
        response = route.fetch()
        view = response.json()
        if answers["pending"] < 3 and view.get("reward"):
            answers["pending"] += 1
            view["reward"].update(status="pending", coins=None, capped=None, badges=None)
        route.fulfill(response=response, body=json.dumps(view))

    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    try:
        page = ctx.new_page()
        page.route(f"**/games/{game}", pending)
        page.goto(board_url + "/")
        page.evaluate(
            "s => localStorage.setItem('swarm.board.session', JSON.stringify(s))",
            {**{k: hana[k] for k in ("token", "player_id", "name")}, "registered": True},
        )
        page.goto(f"{board_url}/#/game/{game}")
        page.locator(".result .paid", has_text="Your reward is on its way").wait_for()
        assert "⭐ +100 XP" in _paid(page)
        page.locator(".result .paid", has_text="💰 +30 reward coins").wait_for(timeout=20_000)
        assert answers["pending"] == 3
        assert "on its way" not in _paid(page)
    finally:
        ctx.close()
