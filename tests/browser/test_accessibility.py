"""Issue 25: a strict Content-Security-Policy on the board, and an accessibility scan with
axe-core (the npm package in tests/browser/node_modules, `npm ci --prefix tests/browser`,
injected from there: no CDN) finding no serious or critical violation on any screen: setup,
game, result, replay (the analysis open too), My games, profile, account, leaderboard, lobby and
table (issue 44, item 2: the replay was never scanned, and had 44)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.board import account, guest, play_to_end, start_solo, verdict

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"


def test_the_board_is_served_with_a_strict_content_security_policy(board_url: str) -> None:
    for path in ("/", "/index.html", "/board.js"):
        policy = httpx.get(board_url + path).headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
        assert "frame-ancestors 'none'" in policy


def test_a_whole_game_breaks_none_of_the_policy(page: Any) -> None:
    """The page reports every violation it meets (securitypolicyviolation): a whole game, the
    deal checked with WebCrypto, the Meadow log and My games meet none."""
    page.add_init_script(
        "window.__violations = [];"
        " document.addEventListener('securitypolicyviolation',"
        " e => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));"
    )
    page.reload()
    start_solo(page, players=2)
    play_to_end(page)
    assert verdict(page) == "ok"
    page.get_by_role("link", name="My games").click()
    page.locator(".my-table").first.wait_for()
    assert page.evaluate("window.__violations") == []


@pytest.fixture
def axe_page(browser: Any, board_url: str) -> Iterator[Any]:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci --prefix tests/browser` (.ci/run does)")
    ctx = browser.new_context(
        viewport={"width": 1280, "height": 800}, reduced_motion="reduce", bypass_csp=True
    )
    page = ctx.new_page()
    page.goto(board_url + "/")
    yield page
    ctx.close()


def _serious(page: Any, where: str) -> list[str]:
    page.wait_for_timeout(300)  # let the screen settle
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async () => {
            const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
            const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
            const where = (v) => v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ');
            return r.violations.filter(v => ['serious', 'critical'].includes(v.impact))
                .map(v => `${v.id} (${v.impact}): ${where(v)}`);
        }"""
    )
    return [f"{where}: {v}" for v in found]


def test_no_serious_or_critical_accessibility_violation(axe_page: Any, board_url: str) -> None:
    page = axe_page
    found = _serious(page, "setup")
    start_solo(page, players=4)
    found += _serious(page, "game")
    page.locator(".hand button.bee").first.click()
    page.locator(".hand button.bee.tapped").wait_for()
    found += _serious(page, "game, a bee tapped")
    play_to_end(page)
    verdict(page)
    found += _serious(page, "result")
    # The replay of the game just played, at its last step, with the analysis open.
    gid = page.evaluate("location.hash.split('/')[2]")
    page.goto(f"{board_url}/#/replay/{gid}")
    page.locator(".replay-step").wait_for()
    found += _serious(page, "replay")
    page.keyboard.press("End")
    page.get_by_role("button", name="What would the bee have played?").click()
    page.locator(".analysis-table").wait_for(timeout=60_000)
    found += _serious(page, "replay, the analysis open")
    page.goto(board_url + "/#/games")
    page.locator(".my-table").first.wait_for()
    found += _serious(page, "my games")
    page.goto(board_url + "/#/profile")
    page.locator(".profile").first.wait_for()
    found += _serious(page, "profile")
    page.goto(board_url + "/#/account")
    page.get_by_role("form").first.wait_for()
    found += _serious(page, "account")
    page.goto(board_url + "/#/leaderboard")
    page.locator(".leaderboard").first.wait_for()
    found += _serious(page, "leaderboard")
    page.goto(board_url + "/#/lobby")
    page.get_by_role("heading", name="Lobby").wait_for()
    found += _serious(page, "lobby")
    page.get_by_role("button", name="Open the table").click()
    page.wait_for_function("() => location.hash.startsWith('#/table/')")
    page.get_by_role("heading", name=re.compile("table")).wait_for()
    found += _serious(page, "table")
    assert not found, "\n".join(found)


def test_the_ratings_places_have_no_serious_violation(axe_page: Any, board_url: str) -> None:
    """Issue 43's new places: a rated game's replay with each person's rating, and the table
    Play now opened once nobody has come, offering bees."""
    from tests.browser.test_ratings import _auth, _play_to_the_end, _sign_in

    page = axe_page
    ann, ben = account(board_url, "Ann"), account(board_url, "Ben")
    body = {"seats": 2, "turn_seconds": 600, "choice_seconds": 600, "rated": True}
    table = httpx.post(f"{board_url}/tables", json=body, headers=_auth(ann)).json()
    joined = httpx.post(
        f"{board_url}/tables/{table['table_id']}/seats", json={}, headers=_auth(ben)
    )
    gid = joined.json()["game"]["game_id"]
    _play_to_the_end(board_url, {1: ann, 2: ben}, gid)
    _sign_in(page, board_url, ann)
    page.goto(f"{board_url}/#/replay/{gid}")
    page.get_by_role("region", name="Ratings").locator("li").nth(1).wait_for()
    found = _serious(page, "replay with ratings")
    page.clock.install()
    page.goto(board_url + "/#/lobby")
    form = page.get_by_role("form", name="Open a table")
    form.get_by_label("Seats").select_option("8")  # a kind no other test asks for
    form.get_by_role("button", name="▶ Play now").click()
    page.wait_for_function("() => location.hash.startsWith('#/table/')")
    page.locator(".waiting").get_by_text("Waiting for others").wait_for()
    page.clock.fast_forward(31_000)
    page.get_by_role("group", name="Nobody has come").wait_for()
    found += _serious(page, "table, nobody came")
    assert not found, "\n".join(found)


def test_a_guest_forgotten_is_logged_out(page: Any, board_url: str) -> None:
    """'Forget this guest' revokes the token on the server (logout), not only in the browser."""
    person = guest(board_url, "Fay")
    page.evaluate(
        "s => localStorage.setItem('swarm.board.session', JSON.stringify(s))",
        {"token": person["token"], "player_id": person["player_id"], "name": "Fay"},
    )
    page.goto(board_url + "/#/profile")
    page.get_by_role("button", name="Forget this guest").click()
    page.get_by_role("button", name="Into the meadow").wait_for()
    me = httpx.get(board_url + "/me", headers={"authorization": f"Bearer {person['token']}"})
    assert me.status_code == 401
