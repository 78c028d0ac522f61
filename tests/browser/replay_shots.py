"""`python -m tests.browser.replay_shots`: photograph the replay screen (issue 26) into
docs/board/: a finished 4-seat game at a sixth bee's take (replay-sixth-bee.png) and at a
person's too-low choice (replay-too-low.png), the sixth bee on a phone (replay-390x844.png),
and a phone's first screen (setup-390x844.png: Into the meadow and the whole menu). Runs the
real app on a throw-away database, as `make screenshots` does, with deals that make the
person's lowest bee too low on turn 1."""

from __future__ import annotations

import sys

from tests.browser.board import chromium_missing, launch, lowest_bee_too_low
from tests.browser.replay import api_get, finished_game, open_replay, wait_position
from tests.browser.screenshots import DESKTOP, OUT
from tests.deals import seeds_where
from tests.live_server import serve

PHONE = {"width": 390, "height": 844}


def main() -> int:
    missing = chromium_missing()
    if missing:
        print(f"replay screenshots need Chromium: {missing}", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    from service.api.app import create_app
    from service.store.database import provide_test_database_url
    from service.store.migrate import migrate

    OUT.mkdir(parents=True, exist_ok=True)
    with provide_test_database_url() as url, sync_playwright() as playwright:
        migrate(url)
        server = serve(create_app(url, server_seeds=seeds_where(4, lowest_bee_too_low)))
        base = next(server)
        browser = launch(playwright)
        try:
            person, gid = finished_game(base)
            steps = api_get(base, person, f"/games/{gid}/steps")["steps"]
            page = browser.new_context(viewport=DESKTOP, reduced_motion="reduce").new_page()
            open_replay(page, base, person, gid)
            page.wait_for_function("() => document.querySelector('.verdict')?.dataset.verdict")
            for name, kind in (("replay-sixth-bee", "sixth_bee"), ("replay-too-low", "too_low")):
                version = next(s["version"] for s in steps if s["kind"] == kind)
                page.get_by_role("button", name=f"v{version} ", exact=False).first.click()
                wait_position(page, version)
                page.wait_for_timeout(300)
                page.evaluate("window.scrollTo(0, 0)")
                path = OUT / f"{name}.png"
                page.screenshot(path=str(path))
                print(f"wrote {path.relative_to(OUT.parents[1])}")
            phone = browser.new_context(viewport=PHONE, reduced_motion="reduce").new_page()
            open_replay(phone, base, person, gid)
            version = next(s["version"] for s in steps if s["kind"] == "sixth_bee")
            phone.get_by_role("button", name=f"v{version} ", exact=False).first.click()
            wait_position(phone, version)
            phone.wait_for_timeout(300)
            phone.evaluate("window.scrollTo(0, 0)")
            phone.screenshot(path=str(OUT / "replay-390x844.png"))
            phone.goto(base + "/")
            phone.get_by_role("button", name="Into the meadow").wait_for()
            phone.wait_for_timeout(300)
            phone.screenshot(path=str(OUT / "setup-390x844.png"))
            print("wrote docs/board/replay-390x844.png, docs/board/setup-390x844.png")
        finally:
            browser.close()
            next(server, None)  # past its yield: the server stops before the database goes
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
