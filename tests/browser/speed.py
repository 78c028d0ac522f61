"""The time from CONFIRM to the next playable turn at 8 seats, at each animation speed (issue
25): `python -m tests.browser.speed [--base URL] [--turns N]`. Solo games in Chromium with
motion allowed; the speeds interleaved turn by turn in the same run, one browser each, so they
meet the same machine. Only turns whose outcome needs no choice count. Not run by `make test`:
speed is measured, never asserted in a timed test."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.browser.board import chromium_missing, launch, start_solo, wait_idle

SPEEDS = ("normal", "fast", "off")

_NEXT = """n => document.querySelector('.result') || document.querySelector('button.take')
  || (document.querySelectorAll('.hand button.bee').length < n
      && [...document.querySelectorAll('.hand button.bee')].some(b => !b.disabled))"""


def confirm_to_next_turn(page: Any) -> float | None:
    """Tap the middle bee, CONFIRM, and time until the next turn can be played (None when the
    turn ended in a choice or the game ended)."""
    if wait_idle(page) != "picking":
        return None
    bees = page.locator(".hand button.bee")
    before = bees.count()
    bees.nth(before // 2).click()
    page.locator(".hand button.bee.tapped").wait_for()
    start = time.perf_counter()
    page.get_by_role("button", name="CONFIRM").click()
    page.wait_for_function(_NEXT, arg=before, timeout=30_000, polling="raf")
    took = time.perf_counter() - start
    if page.locator(".result").count() or page.locator("button.take").count():
        return None
    return took


@contextmanager
def _server(base: str | None) -> Iterator[str]:
    if base:
        yield base
        return
    from service.api.app import create_app
    from service.store.database import provide_test_database_url
    from service.store.migrate import migrate
    from tests.live_server import serve

    with provide_test_database_url() as url:
        migrate(url)
        server = serve(create_app(url))
        try:
            yield next(server)
        finally:
            server.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", help="a running service (default: a throw-away one)")
    parser.add_argument("--turns", type=int, default=6, help="timed turns per speed")
    args = parser.parse_args()
    missing = chromium_missing()
    if missing:
        print(f"needs Chromium: {missing}")
        return 1
    from playwright.sync_api import sync_playwright

    with _server(args.base) as base, sync_playwright() as playwright:
        browser = launch(playwright)
        pages = {}
        for speed in SPEEDS:
            ctx = browser.new_context(viewport={"width": 1280, "height": 800})
            page = ctx.new_page()
            page.goto(base + "/")
            page.evaluate("s => localStorage.setItem('swarm.board.speed', s)", speed)
            start_solo(page, players=8, name=f"Timer {speed}")
            pages[speed] = page
        samples: dict[str, list[float]] = {speed: [] for speed in SPEEDS}
        while any(len(samples[s]) < args.turns for s in SPEEDS):
            for speed in SPEEDS:
                page = pages[speed]
                if len(samples[speed]) >= args.turns:
                    continue
                if wait_idle(page) == "ended":
                    start_solo_again(page)
                    continue
                if wait_idle(page) == "choosing":
                    page.locator("button.take.cheapest").click()
                    page.locator("button.take").first.wait_for(state="detached")
                    continue
                took = confirm_to_next_turn(page)
                if took is not None:
                    samples[speed].append(took)
        browser.close()
    print("CONFIRM → next playable turn, 8 seats, solo (seconds: median, min–max, n)")
    for speed in SPEEDS:
        s = samples[speed]
        print(f"  {speed:6} {statistics.median(s):5.2f}  {min(s):.2f}–{max(s):.2f}  n={len(s)}")
    return 0


def start_solo_again(page: Any) -> None:
    page.locator(".result").get_by_role("button", name="Play again").click()
    page.locator(".game-bar .turn", has_text="Turn 1 of 10").wait_for()


if __name__ == "__main__":
    raise SystemExit(main())
