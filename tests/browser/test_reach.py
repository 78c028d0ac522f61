"""Issue 25, item 1: the hand and CONFIRM (and TAKE when choosing) are in reach without scrolling
at 1280×800, 1366×768, 390×844 and 375×740, at every turn of whole games at 2 and 8 seats, solo
and online with the clock's notices showing; after CONFIRM on a phone the stems are in view.

One game per case, its every turn checked at the four sizes in turn (the window is resized, as a
person turning a tablet would), so four games cover all sixteen combinations."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browser.board import (
    guest,
    hand,
    lowest_bee_too_low,
    resume_as,
    too_low_game,
    wait_idle,
)
from tests.browser.reach import PHONES, check_every_size, out_of_reach, stems_visible
from tests.deals import seeds_where
from tests.live_server import serve


@pytest.fixture(scope="module")
def too_low_8_url(database_url: str) -> Iterator[str]:
    """As `too_low_url`, for 8 seats: seat 1's lowest bee is too low on turn 1."""
    from service.api.app import create_app

    yield from serve(create_app(database_url, server_seeds=seeds_where(8, lowest_bee_too_low)))


def _play_checking(
    page: Any, *, wait_for_clock: frozenset[int] = frozenset(), timeout: float = 150
) -> dict[str, int]:
    """Play the game to its end, checking reach at the four sizes at every turn (and every
    choice). Turns in `wait_for_clock` are left to the clock. Returns what was seen."""
    seen = {"turns": 0, "choices": 0, "notices": 0, "phone_confirms": 0}
    deadline = time.monotonic() + timeout
    while (state := wait_idle(page, timeout=30)) != "ended":
        assert time.monotonic() < deadline, "the game did not end"
        turn = page.locator(".game-bar .turn").inner_text()
        if page.locator(".banner .notice").count():
            seen["notices"] += 1
        if state == "choosing":
            check_every_size(page, f"{turn}, choosing")
            seen["choices"] += 1
            take = page.locator("button.take.cheapest")
            with contextlib.suppress(Exception):  # the clock may have chosen first
                take.click(timeout=3000)
            page.locator("button.take").first.wait_for(state="detached")
            continue
        check_every_size(page, turn)
        seen["turns"] += 1
        number = int(re.findall(r"\d+", turn)[0])
        if number in wait_for_clock:
            page.wait_for_function(
                "t => document.querySelector('.result') || document.querySelector('button.take')"
                " || document.querySelector('.game-bar .turn').textContent !== t",
                arg=turn,
                timeout=30_000,
            )
            continue
        bees = page.locator(".hand button.bee")
        before = bees.count()
        try:
            bees.nth(before // 2).click(timeout=3000)
            page.locator(".hand button.bee.tapped").wait_for(timeout=3000)
        except Exception:  # the clock ended the turn first
            continue
        check_every_size(page, f"{turn}, a bee tapped")
        phone = PHONES[number % len(PHONES)]
        page.set_viewport_size({"width": phone[0], "height": phone[1]})
        try:
            page.get_by_role("button", name="CONFIRM").click(timeout=3000)
        except Exception:
            continue
        page.wait_for_function(
            "n => document.querySelector('.result') || document.querySelector('button.take')"
            " || document.querySelectorAll('.hand button.bee').length < n",
            arg=before,
        )
        assert stems_visible(page), f"{turn}: after CONFIRM at {phone} the stems are out of view"
        seen["phone_confirms"] += 1
    return seen


def _phone_context(browser: Any) -> Any:
    return browser.new_context(
        viewport={"width": 390, "height": 844}, reduced_motion="reduce", has_touch=True
    )


@pytest.mark.parametrize("seats", [2, 8])
def test_solo_every_turn_in_reach_at_four_sizes(
    browser: Any, seats: int, too_low_url: str, too_low_8_url: str
) -> None:
    base = too_low_url if seats == 2 else too_low_8_url
    ctx = _phone_context(browser)
    try:
        page = ctx.new_page()
        person, game, _bee = too_low_game(base, players=seats)
        resume_as(page, base, person, game)
        # Turn 1: the lowest bee is too low, so this game has a choice to make.
        page.locator(f'.hand button.bee[data-bee="{_bee}"]').click()
        page.locator(".hand button.bee.tapped").wait_for()
        page.get_by_role("button", name="CONFIRM").click()
        seen = _play_checking(page)
        assert seen["choices"] >= 1 and seen["turns"] >= 9 and seen["phone_confirms"] >= 9, seen
    finally:
        ctx.close()


def _online_game(base: str, seats: int, me: dict[str, Any]) -> str:
    host = guest(base, "Hana")
    auth = {"authorization": f"Bearer {host['token']}"}
    mine = {"authorization": f"Bearer {me['token']}"}
    table = httpx.post(
        f"{base}/tables",
        json={"seats": seats, "stake": 0, "turn_seconds": 6, "choice_seconds": 4},
        headers=auth,
    )
    table.raise_for_status()
    table_id = table.json()["table_id"]
    joined = httpx.post(f"{base}/tables/{table_id}/seats", json={}, headers=mine)
    joined.raise_for_status()
    if joined.json().get("game"):
        return str(joined.json()["game"]["game_id"])
    started = httpx.post(f"{base}/tables/{table_id}/bees", json={}, headers=auth)
    started.raise_for_status()
    return str(started.json()["game"]["game_id"])


@pytest.mark.parametrize("seats", [2, 8])
def test_online_every_turn_in_reach_with_the_clocks_notices(
    browser: Any, board_url: str, seats: int
) -> None:
    """Hana (through the API) never plays: the clock plays for her. Bob leaves turns 2, 5 and 8
    to the clock too, so the next turns show the clock's notices above his hand. The clock is
    6 s, not shorter: checking four window sizes can outlast a 2-s turn on a loaded machine, and
    three turns missed in a row abandon the game (seed §7) before the test has seen it through."""
    ctx = _phone_context(browser)
    try:
        page = ctx.new_page()
        bob = guest(board_url, "Bob")
        game = _online_game(board_url, seats, bob)
        resume_as(page, board_url, bob, game, mode="online")
        seen = _play_checking(page, wait_for_clock=frozenset({2, 5, 8}))
        assert seen["notices"] >= 2 and seen["turns"] >= 6, seen
    finally:
        ctx.close()


_STEMS_CLIPPED = """() => {
  const m = document.querySelector('.middle').getBoundingClientRect();
  const out = (el) => {
    const r = el.getBoundingClientRect();
    return r.top < m.top - 0.5 || r.bottom > m.bottom + 0.5;
  };
  const stems = [...document.querySelectorAll('.stem')].filter(out);
  const takes = [...document.querySelectorAll('button.take')].filter(out);
  return [...stems, ...takes].map((el) => el.getAttribute('aria-label') || el.className);
}"""


def test_a_short_phone_shows_all_four_stems_whole_at_8_seats(
    browser: Any, too_low_8_url: str
) -> None:
    """At 360×640 (a small Android phone), with 8 seats' stings in two rows along the top, all
    four stems (and, when choosing, every TAKE) lie whole inside the scrolling middle: none is
    cut off under the hand, picking or choosing."""
    ctx = browser.new_context(
        viewport={"width": 360, "height": 640}, reduced_motion="reduce", has_touch=True
    )
    try:
        page = ctx.new_page()
        person, game, bee = too_low_game(too_low_8_url, players=8)
        resume_as(page, too_low_8_url, person, game)
        assert page.evaluate(_STEMS_CLIPPED) == [], "picking"
        # Every bee tapped in turn: each its own forecast under the hand, the longest included.
        for other in hand(page):
            page.locator(f'.hand button.bee[data-bee="{other}"]').click()
            page.locator(f'.hand button.bee.tapped[data-bee="{other}"]').wait_for()
            assert page.evaluate(_STEMS_CLIPPED) == [], f"bee {other} tapped"
        page.locator(f'.hand button.bee[data-bee="{bee}"]').click()
        page.locator(".hand button.bee.tapped").wait_for()
        assert page.evaluate(_STEMS_CLIPPED) == [], "a bee tapped"
        page.get_by_role("button", name="CONFIRM").click()
        assert wait_idle(page) == "choosing"
        assert page.evaluate(_STEMS_CLIPPED) == [], "choosing"
        assert out_of_reach(page) == [], "choosing"
    finally:
        ctx.close()
