"""`python -m tests.browser.rating_shots [--only NAME,…]`: photograph the board's places for
ratings (issue 43) at 1366×768 and 390×844 into docs/board/: My games with the games played
(history-*), the leaderboard by rating (leaderboard-rating-*), the lobby with a rated table and
its average rating (lobby-rated-*), the profile (profile-rating-*), the end of a rated game
with each person's change (result-rated-*), its replay with the ratings (replay-ratings-*),
and Play now's waiting table once nobody has come, offering bees (play-now-*). `--only` takes
those names without the size.

Runs the real app on a throw-away database (as `make screenshots` does); three people with
accounts play three rated games through the API first, so the pages have something to show.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

import httpx

from tests.browser.board import account, chromium_missing, launch
from tests.browser.screenshots import OUT, shoot
from tests.browser.test_ratings import _auth, _play_to_the_end, _sign_in
from tests.live_server import serve

SIZES = [(1366, 768), (390, 844)]


def _rated_games(base: str, people: list[dict[str, Any]], games: int) -> tuple[str, str]:
    """`games` rated games of everyone at one table (Play again between them); the table is
    left open, between games, for the lobby. Returns the table and its last game."""
    host = people[0]
    body = {"seats": len(people), "turn_seconds": 600, "choice_seconds": 600, "rated": True}
    table = httpx.post(f"{base}/tables", json=body, headers=_auth(host)).json()
    game_id = ""
    for person in people[1:]:
        joined = httpx.post(
            f"{base}/tables/{table['table_id']}/seats", json={}, headers=_auth(person)
        ).json()
        game_id = joined["game"]["game_id"] if joined.get("game") else game_id
    seats = dict(enumerate(people, 1))
    for n in range(games):
        if n:
            again = httpx.post(
                f"{base}/tables/{table['table_id']}/games", json={}, headers=_auth(host)
            ).json()
            game_id = again["games"][-1]
        _play_to_the_end(base, seats, game_id)
    return str(table["table_id"]), game_id


def _play_now_waiting(browser: Any, base: str, width: int, height: int, seats: int) -> None:
    """Play now from the lobby; nobody comes; 31 seconds later (the page's clock moved on) the
    table offers bees."""
    ctx = browser.new_context(viewport={"width": width, "height": height}, reduced_motion="reduce")
    page = ctx.new_page()
    page.clock.install()
    _sign_in(page, base, account(base, "Dana"))
    page.goto(base + "/#/lobby")
    form = page.get_by_role("form", name="Open a table")
    form.get_by_label("Seats").select_option(str(seats))  # a kind nobody waits at
    form.get_by_role("button", name="▶ Play now").click()
    page.wait_for_url(re.compile(r".*#/table/.+"))
    page.locator(".waiting").get_by_text("Waiting for others").wait_for()
    page.clock.fast_forward(31_000)
    offer = page.get_by_role("group", name="Nobody has come")
    offer.wait_for()
    offer.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    page.screenshot(path=str(OUT / f"play-now-{width}x{height}.png"))
    print(f"wrote docs/board/play-now-{width}x{height}.png")
    ctx.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", type=lambda text: set(text.split(",")), default=None)
    only = parser.parse_args(argv).only

    def want(name: str) -> bool:
        return only is None or name in only

    missing = chromium_missing()
    if missing:
        print(f"rating_shots needs Chromium: {missing}", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    from service.api.app import create_app
    from service.store.database import provide_test_database_url
    from service.store.migrate import migrate

    with provide_test_database_url() as url, sync_playwright() as playwright:
        migrate(url)
        server = serve(create_app(url))
        base = next(server)
        browser = launch(playwright)
        try:
            people = [account(base, n) for n in ("Ada", "Bram", "Cleo")]
            _, last_game = _rated_games(base, people, 3)
            for n, (width, height) in enumerate(SIZES):
                ctx = browser.new_context(
                    viewport={"width": width, "height": height}, reduced_motion="reduce"
                )
                page = ctx.new_page()
                _sign_in(page, base, people[0])
                size = f"{width}x{height}"
                if want("history"):
                    page.goto(base + "/#/games")
                    page.locator(".past-game").first.wait_for()
                    page.locator(".my-history").scroll_into_view_if_needed()
                    page.wait_for_timeout(300)
                    page.screenshot(path=str(OUT / f"history-{size}.png"))
                    print(f"wrote docs/board/history-{size}.png")
                if want("leaderboard-rating"):
                    page.goto(base + "/#/leaderboard/rating")
                    page.locator("tr.me").wait_for()
                    shoot(page, f"leaderboard-rating-{size}")
                if want("lobby-rated"):
                    page.goto(base + "/#/lobby")
                    page.locator("tr[data-table]").first.wait_for()
                    shoot(page, f"lobby-rated-{size}")
                if want("profile-rating"):
                    page.goto(base + "/#/profile")
                    page.locator(".stats").wait_for()
                    shoot(page, f"profile-rating-{size}")
                if want("result-rated"):
                    page.goto(f"{base}/#/game/{last_game}")
                    page.locator(".result .paid").get_by_text("Your rating").wait_for()
                    shoot(page, f"result-rated-{size}")
                if want("replay-ratings"):
                    page.goto(f"{base}/#/replay/{last_game}")
                    ratings = page.get_by_role("region", name="Ratings")
                    ratings.locator("li").first.wait_for()  # drawn once a step is shown
                    ratings.scroll_into_view_if_needed()
                    page.wait_for_timeout(300)
                    page.screenshot(path=str(OUT / f"replay-ratings-{size}.png"))
                    print(f"wrote docs/board/replay-ratings-{size}.png")
                ctx.close()
                if want("play-now"):
                    _play_now_waiting(browser, base, width, height, seats=3 + n)
        finally:
            browser.close()
            server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
