"""Issue 25, item 10: a whole game by keyboard alone, in no more than 3 keys a turn. The keyboard
starts each turn on the lowest bee: Enter taps it, Enter again confirms it; a too-low bee's
choice starts on the cheapest TAKE (Enter); at the end the result has the keyboard, and Escape
closes it (and the Meadow log), leaving the focus on a control, never on the page's body."""

from __future__ import annotations

from typing import Any

from tests.browser.board import resume_as, too_low_game, wait_idle

FOCUS = (
    "() => { const a = document.activeElement;"
    " return [a.tagName, a.className, a.dataset.bee ?? null]; }"
)


def test_a_whole_game_by_keyboard_in_at_most_three_keys_a_turn(page: Any, too_low_url: str) -> None:
    person, game, bee = too_low_game(too_low_url)
    resume_as(page, too_low_url, person, game)
    page.wait_for_function("() => document.activeElement.matches('.hand button.bee')")
    assert page.evaluate(FOCUS)[2] == str(bee), "turn 1 starts on the lowest bee"
    keys_per_turn: list[int] = []
    choices = 0
    while (state := wait_idle(page)) != "ended":
        keys = 0
        if state == "choosing":
            page.wait_for_function("() => document.activeElement.matches('button.take.cheapest')")
            page.keyboard.press("Enter")
            keys += 1
            choices += 1
            page.locator("button.take").first.wait_for(state="detached")
        else:
            before = page.locator(".hand button.bee").count()
            page.wait_for_function("() => document.activeElement.matches('.hand button.bee')")
            page.keyboard.press("Enter")  # tap the focused bee
            page.locator(".hand button.bee.tapped").wait_for()
            page.keyboard.press("Enter")  # CONFIRM it
            keys += 2
            page.wait_for_function(
                "n => document.querySelector('.result') || document.querySelector('button.take')"
                " || document.querySelectorAll('.hand button.bee').length < n",
                arg=before,
            )
        keys_per_turn.append(keys)
    assert choices >= 1 and len(keys_per_turn) >= 10
    assert max(keys_per_turn) <= 3, keys_per_turn

    page.wait_for_function("() => document.activeElement.closest('.result') !== null")
    assert page.evaluate(FOCUS)[0] == "BUTTON"
    page.keyboard.press("Escape")
    page.locator(".result").wait_for(state="detached")
    assert page.evaluate("document.activeElement.matches('button.show-result')")
    page.keyboard.press("Enter")
    page.locator(".result").wait_for()

    # Escape closes the Meadow log too, and gives the keyboard back to its toggle.
    page.get_by_role("button", name="open the ⏱ Meadow log").click()
    page.locator("#meadow-panel").wait_for()
    page.keyboard.press("Escape")
    page.locator("#meadow-panel").wait_for(state="hidden")
    assert page.evaluate("document.activeElement.matches('.meadow-toggle')")
