"""Accounts in the browser: a guest registers (keeping their identity), sees coins, XP, level
and badges on the profile page, and the leaderboard; logging out forgets the token."""

from __future__ import annotations

import uuid
from typing import Any


def test_register_then_profile_leaderboard_and_log_out(page: Any, board_url: str) -> None:
    page.goto(board_url + "/#/lobby")
    page.get_by_label("Play as a guest").fill("Wren")
    page.get_by_role("button", name="Play as guest").click()
    page.get_by_role("heading", name="Lobby").wait_for()

    page.goto(board_url + "/#/profile")
    page.get_by_text("Guest: register to earn coins, XP and badges").wait_for()
    page.get_by_role("link", name="Register or log in").click()
    name = f"wren-{uuid.uuid4().hex[:8]}"
    register = page.get_by_role("form", name="Register (keep your guest identity)")
    register.get_by_label("Name").fill(name)
    register.get_by_label("Password").fill("meadow-pass-1")
    register.get_by_role("button", name="Register (keep your guest identity)").click()

    page.get_by_role("heading", name=name).wait_for()
    stats = dict(
        zip(
            page.locator(".stats dt").all_inner_texts(),
            page.locator(".stats dd").all_inner_texts(),
            strict=True,
        )
    )
    assert stats["COINS"] == "💰 1000" and stats["LEVEL"] == "1" and stats["XP"] == "0"
    assert page.get_by_role("progressbar", name="XP to the next level").is_visible()
    assert "No badges yet" in page.locator(".profile").inner_text()
    assert page.locator(".me-chip").inner_text().endswith(name)

    page.get_by_role("link", name="Leaderboard").click()
    page.get_by_role("heading", name="Leaderboard").wait_for()
    page.get_by_role("link", name="By XP").click()
    page.wait_for_url("**/#/leaderboard/xp")
    page.locator('.tabs a[aria-current="page"]', has_text="By XP").wait_for()
    assert page.get_by_role("link", name="By wins").get_attribute("aria-current") is None

    page.goto(board_url + "/#/profile")
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("button", name="Into the meadow").wait_for()
    assert page.evaluate("localStorage.getItem('swarm.board.session')") is None
