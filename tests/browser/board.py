"""Driving the board as a person does (by role and label), shared by the browser tests and
`make screenshots`. Only what a person could see or do, plus the public API for set-ups."""

from __future__ import annotations

import os
import re
import time
import uuid
from typing import Any

import httpx

# The setup calls below go straight to the API. httpx's default timeout (5 s) is shorter than a
# sign-up can take on a machine at load 5 (each hashes a password), so they wait longer.
_API = httpx.Client(timeout=30)

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is not installed"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return None


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)


def start_solo(page: Any, players: int = 4, name: str = "Ada") -> str:
    """Setup → choose the players → Into the meadow; returns the game id from the address."""
    # by its own number (the checked one reads "4 ✓"), not a level whose rating holds digits
    page.get_by_role("radio", name=re.compile(rf"^{players}\b")).check(force=True)
    name_box = page.get_by_label("Your name")
    if name_box.count():
        name_box.fill(name)
    page.get_by_role("button", name="Into the meadow").click()
    page.wait_for_url(re.compile(r"#/game/"))
    page.locator(".hand button.bee").first.wait_for()
    return game_id(page)


def game_id(page: Any) -> str:
    return str(page.url.split("#/game/")[1])


def hand(page: Any) -> list[int]:
    return [
        int(b)
        for b in page.locator(".hand button.bee").evaluate_all("bs => bs.map(b => b.dataset.bee)")
    ]


def turn_number(page: Any) -> str:
    return str(page.locator(".game-bar .turn").inner_text())


def wait_idle(page: Any, timeout: float = 15) -> str:
    """Until the board awaits this person (a bee to pick, a stem to take) or shows the result."""
    page.wait_for_function(
        """() => document.querySelector('.result')
              || document.querySelector('button.take')
              || [...document.querySelectorAll('.hand button.bee')].some(b => !b.disabled)""",
        timeout=timeout * 1000,
    )
    if page.locator(".result").count():
        return "ended"
    if page.locator("button.take").count():
        return "choosing"
    return "picking"


def play_turn(page: Any, index: int = 0) -> None:
    """Tap a bee, then CONFIRM (or TAKE the cheapest stem when the board asks for one)."""
    state = wait_idle(page)
    if state == "choosing":
        page.locator("button.take.cheapest").click()
        page.locator("button.take").first.wait_for(state="detached")
        return
    if state == "picking":
        bees = page.locator(".hand button.bee")
        before = bees.count()
        moved_on = (
            "n => document.querySelector('.result') || document.querySelector('button.take') "
            "|| document.querySelectorAll('.hand button.bee').length < n"
        )
        try:
            bees.nth(min(index, before - 1)).click(timeout=5000)
        except Exception:
            # On a short clock on a busy machine the turn may run out between seeing the bee
            # and clicking it (its last bee flown, the hand empty): that is the clock's move,
            # and all there is to do. Anything else is a real failure.
            if not page.evaluate(f"({moved_on})({before})"):
                raise
            return
        # On a clock the turn may end first: then the clock flew the bee, and that is all.
        page.wait_for_function(
            f"n => document.querySelector('.hand button.bee.tapped') || ({moved_on})(n)", arg=before
        )
        confirm = page.get_by_role("button", name="CONFIRM")
        if not page.locator(".hand button.bee.tapped").count() or confirm.is_disabled():
            return
        try:
            confirm.click(timeout=3000)
        except Exception:  # the clock ran out in between: the tapped bee flew
            return
        # Done when the board has drawn the turn's outcome: the bee left the hand, or a stem
        # must be taken, or the game is over.
        page.wait_for_function(
            "n => document.querySelector('.result') || document.querySelector('button.take') "
            "|| document.querySelectorAll('.hand button.bee').length < n",
            arg=before,
        )


def play_to_end(page: Any, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while wait_idle(page) != "ended":
        assert time.monotonic() < deadline, "the game did not end"
        play_turn(page)
    page.locator(".result").wait_for()


def verdict(page: Any, timeout: float = 20) -> str:
    """The Meadow log's verdict once the browser has checked the deal: ok or failed."""
    page.wait_for_function(
        "() => ['ok', 'failed', 'error', 'unavailable']"
        ".includes(document.querySelector('.verdict')?.dataset.status)",
        timeout=timeout * 1000,
    )
    return str(page.locator(".verdict").get_attribute("data-status"))


def open_meadow(page: Any) -> None:
    toggle = page.get_by_role("button", name="⏱ Meadow log", exact=True)
    if toggle.get_attribute("aria-expanded") != "true":
        if page.locator(".result").count():  # the result covers the board: its own link
            page.get_by_role("button", name="open the ⏱ Meadow log").click()
        else:
            toggle.click()
    page.locator("#meadow-panel").wait_for()


# --- set-ups through the public API ---------------------------------------------------------


def guest(base: str, name: str) -> dict[str, Any]:
    response = _API.post(f"{base}/guests", json={"name": name})
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    return body


def account(base: str, name: str) -> dict[str, Any]:
    """A new account (a name made unique), with its token: `registered` is true."""
    response = _API.post(
        f"{base}/accounts",
        json={"name": f"{name}{uuid.uuid4().hex[:4]}", "password": "correct horse"},
    )
    response.raise_for_status()
    return {**response.json(), "registered": True}


def buy_in_game(base: str, people: dict[int, dict[str, Any]], stake: int) -> str:
    """Seat 1 opens a buy-in table for everyone in `people`, and they sit down in seat order:
    full, it deals its first game, whose id is returned."""
    headers = {n: {"authorization": f"Bearer {p['token']}"} for n, p in people.items()}
    body = {"seats": len(people), "stake": stake, "turn_seconds": 600, "choice_seconds": 600}
    table = _API.post(f"{base}/tables", json=body, headers=headers[1])
    table.raise_for_status()
    for n in sorted(people)[1:]:
        joined = _API.post(
            f"{base}/tables/{table.json()['table_id']}/seats", json={}, headers=headers[n]
        )
        joined.raise_for_status()
    return str(joined.json()["game"]["game_id"])


def lowest_bee_too_low(hands: Any, stems: Any) -> bool:
    """Seat 1's lowest bee is below every stem and below every other hand: confirmed on turn 1,
    it is the turn's lowest pick and too low, whatever the bee players pick (seed §5)."""
    return bool(min(hands[0]) < min(*stems, *(min(hand) for hand in hands[1:])))


def too_low_game(base: str, name: str = "Ada", players: int = 2) -> tuple[dict[str, Any], str, int]:
    """A solo game on an app whose server seeds are searched for `lowest_bee_too_low` (see
    tests/deals.py): returns (the guest, the game id, the bee to confirm for a too-low turn)."""
    person = guest(base, name)
    headers = {"authorization": f"Bearer {person['token']}"}
    response = _API.post(f"{base}/solo-tables", json={"players": players}, headers=headers)
    response.raise_for_status()
    game = response.json()["game"]
    return person, game["game_id"], min(game["hand"])


def resume_as(
    page: Any, base: str, person: dict[str, Any], game: str, mode: str = "solo", hand: bool = True
) -> None:
    """Open the board as this person at this game, as a reload would (localStorage); `hand`:
    wait for their hand (a game still running)."""
    page.goto(base + "/")
    page.evaluate(
        """([session, place]) => {
            localStorage.setItem('swarm.board.session', JSON.stringify(session));
            localStorage.setItem('swarm.board.place', JSON.stringify(place));
        }""",
        [
            {
                "token": person["token"],
                "player_id": person["player_id"],
                "name": person["name"],
                "registered": bool(person.get("registered")),
            },
            {"table_id": None, "game_id": game, "mode": mode},
        ],
    )
    page.goto(f"{base}/#/game/{game}")
    page.locator(".hand button.bee" if hand else ".game-bar .turn").first.wait_for()


def play_lowest(base: str, people: dict[int, dict[str, Any]], game: str) -> dict[str, Any]:
    """Each person (by seat) confirms their lowest bee, and takes the cheapest stem when too
    low, until the game ends (as tests/e2e/api_client.py `play_online_to_the_end`)."""
    n = 0
    while True:
        for seat, person in people.items():
            headers = {"authorization": f"Bearer {person['token']}"}
            view: dict[str, Any] = _API.get(f"{base}/games/{game}", headers=headers).json()
            if view["phase"] == "ended":
                return view
            if view["seats"][seat - 1]["status"] == "left":
                continue
            if view["phase"] == "choosing" and view["choice"]["yours"]:
                move = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
            elif view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
                move = {"type": "confirm", "bee": view["hand"][0]}
            else:
                continue
            n += 1
            answer = _API.post(
                f"{base}/games/{game}/moves",
                json={**move, "move_id": f"{seat}-{n}-{time.monotonic_ns()}"},
                headers=headers,
            )
            answer.raise_for_status()
