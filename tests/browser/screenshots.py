"""`make screenshots`: regenerate docs/board/*.png by playing the board in Chromium.

Runs the real app on a throw-away database (as the tests do: DATABASE_URL, Testcontainers or
an embedded PostgreSQL) and photographs what a person sees: setup, a turn, a too-low choice,
the result, an online buy-in game's result with what it paid (result-online*.png), the Meadow
log, a phone, and a turn at each of the four window sizes the board is held to (turn-WxH.png).
Deals are random, so each run shows other bees.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.browser.board import (
    account,
    buy_in_game,
    chromium_missing,
    launch,
    lowest_bee_too_low,
    open_meadow,
    play_lowest,
    play_to_end,
    play_turn,
    resume_as,
    start_solo,
    too_low_game,
    verdict,
    wait_idle,
)
from tests.deals import seeds_where
from tests.live_server import serve

OUT = Path(__file__).resolve().parents[2] / "docs" / "board"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
# The four window sizes the board is held to (tests/browser/test_reach.py): a turn at each.
SIZES = [(1280, 800), (1366, 768), (390, 844), (375, 740)]


def shoot(page: Any, name: str, full_page: bool = False) -> None:
    page.wait_for_timeout(400)  # let the last bee settle
    page.evaluate("window.scrollTo(0, 0)")
    path = OUT / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    print(f"wrote {path.relative_to(OUT.parents[1])}")


def main() -> int:
    missing = chromium_missing()
    if missing:
        print(f"make screenshots needs Chromium: {missing}", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    from service.api.app import create_app
    from service.store.database import provide_test_database_url
    from service.store.migrate import migrate

    OUT.mkdir(parents=True, exist_ok=True)
    with provide_test_database_url() as url, sync_playwright() as playwright:
        migrate(url)
        server = serve(create_app(url))
        base = next(server)
        # A second app whose 4-seat deals give seat 1 a bee that is too low on turn 1.
        rigged = serve(create_app(url, server_seeds=seeds_where(4, lowest_bee_too_low)))
        rigged_base = next(rigged)
        browser = launch(playwright)
        try:
            ctx = browser.new_context(viewport=DESKTOP, reduced_motion="reduce")
            page = ctx.new_page()
            page.goto(base + "/")
            shoot(page, "setup")

            start_solo(page, players=4, name="Ada")
            for _ in range(4):
                play_turn(page)
            while wait_idle(page) == "choosing":
                play_turn(page)
            bees = page.locator(".hand button.bee")
            bees.nth(bees.count() // 2).click()
            page.locator(".hand button.bee.tapped").wait_for()
            shoot(page, "turn")

            play_to_end(page)
            verdict(page)
            shoot(page, "result")
            open_meadow(page)
            shoot(page, "meadow-log")
            ctx.close()

            ctx = browser.new_context(viewport=DESKTOP, reduced_motion="reduce")
            page = ctx.new_page()
            person, game, bee = too_low_game(rigged_base, players=4)
            resume_as(page, rigged_base, person, game)
            page.locator(f'.hand button.bee[data-bee="{bee}"]').click()
            page.locator(".hand button.bee.tapped").wait_for()
            page.get_by_role("button", name="CONFIRM").click()
            page.locator("button.take").first.wait_for()
            shoot(page, "too-low")
            ctx.close()

            # An online buy-in game's end, as its winner opens it: what the pot and the reward
            # paid (GameView.pot, .reward), at a desktop and on a phone.
            people = {n: account(base, name) for n, name in enumerate(("Ada", "Bo", "Cy", "Di"), 1)}
            game = buy_in_game(base, people, stake=50)
            end = play_lowest(base, people, game)
            winner = people[end["result"]["winners"][0]]
            for name, size in (("result-online", DESKTOP), ("result-online-phone", PHONE)):
                ctx = browser.new_context(viewport=size, reduced_motion="reduce")
                page = ctx.new_page()
                resume_as(
                    page, base, {**winner, "registered": True}, game, mode="online", hand=False
                )
                page.locator(".result .paid", has_text="Balance").wait_for(timeout=20_000)
                verdict(page)
                shoot(page, name)
                ctx.close()

            # Mid-turn (a bee tapped, its forecast showing) at each of the four sizes, 8 seats.
            for width, height in SIZES:
                phone = width < 720
                ctx = browser.new_context(
                    viewport={"width": width, "height": height},
                    reduced_motion="reduce",
                    is_mobile=phone,
                    has_touch=phone,
                )
                page = ctx.new_page()
                page.goto(base + "/")
                start_solo(page, players=8, name="Ada")
                for _ in range(3):
                    play_turn(page)
                while wait_idle(page) == "choosing":
                    play_turn(page)
                page.locator(".hand button.bee").nth(3).click()
                page.locator(".hand button.bee.tapped").wait_for()
                shoot(page, f"turn-{width}x{height}")
                ctx.close()

            ctx = browser.new_context(
                viewport=PHONE,
                reduced_motion="reduce",
                is_mobile=True,
                has_touch=True,
                device_scale_factor=2,
            )
            page = ctx.new_page()
            page.goto(base + "/")
            start_solo(page, players=5, name="Ada")
            for _ in range(3):
                play_turn(page)
            while wait_idle(page) == "choosing":
                play_turn(page)
            page.locator(".hand button.bee").nth(2).tap()
            page.locator(".hand button.bee.tapped").wait_for()
            shoot(page, "phone")
            ctx.close()
        finally:
            browser.close()
            rigged.close()
            server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
