"""Issue 44, item 5: a phone's first screen. "Into the meadow" is in the window without
scrolling, and the menu shows every item whole (Profile too) and who you are, or, where it
scrolls (in a game), says so with a visible edge."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.board import start_solo

PHONES = [(390, 844), (375, 667), (360, 640)]


def _in_window(page: Any, selector: str) -> bool:
    return bool(
        page.evaluate(
            """sel => { const r = document.querySelector(sel).getBoundingClientRect();
                return r.width > 0 && r.top >= 0 && r.left >= 0
                    && r.bottom <= innerHeight && r.right <= innerWidth; }""",
            selector,
        )
    )


def _menu_cut(page: Any) -> list[str]:
    """The menu's items (and the chip saying who you are) not wholly visible."""
    cut: list[str] = page.evaluate(
        """() => {
            const nav = document.querySelector('header.top nav').getBoundingClientRect();
            const items = [...document.querySelectorAll('header.top nav a'),
                           document.querySelector('#identity a')];
            return items.filter(a => {
                const r = a.getBoundingClientRect();
                const shown = getComputedStyle(a).visibility !== 'hidden' && r.width > 0;
                const inNav = a.closest('nav')
                    ? r.left >= nav.left - 0.5 && r.right <= nav.right + 0.5 : true;
                return !(shown && inNav && r.left >= 0 && r.right <= innerWidth && r.top >= 0);
            }).map(a => a.textContent.trim());
        }"""
    )
    return cut


@pytest.mark.parametrize("size", PHONES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_into_the_meadow_and_the_whole_menu_are_on_a_phones_first_screen(
    page: Any, board_url: str, size: tuple[int, int]
) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(board_url + "/")
    page.get_by_role("button", name="Into the meadow").wait_for()
    assert _in_window(page, "form.solo button[type=submit]"), "Into the meadow is below the fold"
    assert _menu_cut(page) == []
    # With a name (a guest), the chip says who you are, whole, beside the whole menu.
    page.get_by_role("button", name="Into the meadow").click()
    page.locator(".hand button.bee").first.wait_for()
    page.goto(board_url + "/#/lobby")
    page.get_by_role("heading", name="Lobby").wait_for()
    assert _menu_cut(page) == []


def test_a_games_menu_on_a_phone_shows_that_it_scrolls(page: Any) -> None:
    """In a game the menu keeps one row (the hand needs the height): what does not fit is
    reached by scrolling it, and its edge fades to say so."""
    page.set_viewport_size({"width": 360, "height": 640})
    start_solo(page, players=4)
    nav = page.locator("header.top nav")
    overflows = nav.evaluate("n => n.scrollWidth > n.clientWidth + 1")
    if overflows:
        assert nav.evaluate("n => n.classList.contains('more-right')")
        nav.evaluate("n => { n.scrollLeft = n.scrollWidth; n.dispatchEvent(new Event('scroll')); }")
        page.wait_for_function(
            "() => !document.querySelector('header.top nav').classList.contains('more-right')"
        )
    else:
        assert _menu_cut(page) == []


def test_the_rules_box_says_most_bees_carry_1_sting(page: Any) -> None:
    """Issue 44, item 7: "How to play" gave every sting count but the commonest (seed §2)."""
    rules = page.locator(".howto").inner_text()
    assert "Most bees carry 1 ▼" in rules
