"""`python -m tests.browser.rating_shots`: photograph the board's places for ratings (issue 43)
at 1366×768 and 390×844 into docs/board/: My games with the games played, the leaderboard by
rating, the lobby with a rated table and its average rating, and the profile.

Runs the real app on a throw-away database (as `make screenshots` does); three people with
accounts play three rated games through the API first, so the pages have something to show.
"""

from __future__ import annotations

import sys
from typing import Any

import httpx

from tests.browser.board import account, chromium_missing, launch
from tests.browser.screenshots import OUT, shoot
from tests.browser.test_ratings import _auth, _play_to_the_end, _sign_in
from tests.live_server import serve

SIZES = [(1366, 768), (390, 844)]


def _rated_games(base: str, people: list[dict[str, Any]], games: int) -> str:
    """`games` rated games of everyone at one table (Play again between them); the table is
    left open, between games, for the lobby."""
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
    return str(table["table_id"])


def main() -> int:
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
            _rated_games(base, people, 3)
            for width, height in SIZES:
                ctx = browser.new_context(
                    viewport={"width": width, "height": height}, reduced_motion="reduce"
                )
                page = ctx.new_page()
                _sign_in(page, base, people[0])
                size = f"{width}x{height}"
                page.goto(base + "/#/games")
                page.locator(".past-game").first.wait_for()
                page.locator(".my-history").scroll_into_view_if_needed()
                page.wait_for_timeout(300)
                page.screenshot(path=str(OUT / f"history-{size}.png"))
                print(f"wrote docs/board/history-{size}.png")
                page.goto(base + "/#/leaderboard/rating")
                page.locator("tr.me").wait_for()
                shoot(page, f"leaderboard-rating-{size}")
                page.goto(base + "/#/lobby")
                page.locator("tr[data-table]").first.wait_for()
                shoot(page, f"lobby-rated-{size}")
                page.goto(base + "/#/profile")
                page.locator(".stats").wait_for()
                shoot(page, f"profile-rating-{size}")
                ctx.close()
        finally:
            browser.close()
            server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
