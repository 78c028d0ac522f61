"""A finished 4-seat game to replay, played through the public API, and the replay screen
opened as its player (shared by tests/browser/test_replay.py and `replay_shots.py`)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.browser.board import guest


def finished_game(base: str, players: int = 4) -> tuple[dict[str, Any], str]:
    """A solo game played to the end by its person: the lowest bee every turn (on an app whose
    deals make it too low on turn 1, a too-low choice: the costliest stem, to see it), the
    cheapest stem after that. Returns (the guest, the game id)."""
    person = guest(base, "Ada")
    headers = {"authorization": f"Bearer {person['token']}"}
    response = httpx.post(f"{base}/solo-tables", json={"players": players}, headers=headers)
    response.raise_for_status()
    view = response.json()["game"]
    gid = view["game_id"]
    n = 0
    while view["phase"] != "ended":
        n += 1
        if view["phase"] == "choosing":
            costs = view["choice"]["costs"]
            stem = (
                max(costs, key=lambda c: c["stings"])["stem"]
                if n < 3
                else view["choice"]["cheapest"]
            )
            move = {"type": "take_stem", "stem": stem}
        else:
            move = {"type": "confirm", "bee": view["hand"][0]}
        response = httpx.post(
            f"{base}/games/{gid}/moves", json={**move, "move_id": f"m{n}"}, headers=headers
        )
        response.raise_for_status()
        view = response.json()
    return person, gid


def open_replay(page: Any, base: str, person: dict[str, Any], game: str) -> None:
    """The replay screen as this person (their session in localStorage, as the board keeps it)."""
    page.goto(base + "/")
    page.evaluate(
        "session => localStorage.setItem('swarm.board.session', JSON.stringify(session))",
        {
            "token": person["token"],
            "player_id": person["player_id"],
            "name": person["name"],
            "registered": False,
        },
    )
    page.goto(f"{base}/#/replay/{game}")
    page.locator(".replay-step").wait_for()


def position(page: Any) -> int:
    """The version the screen shows."""
    text = str(page.locator(".replay-pos").inner_text())
    return int(text.split()[1])


def wait_position(page: Any, version: int) -> None:
    page.wait_for_function(
        "v => Number(document.querySelector('.replay-pos')?.textContent.split(' ')[1]) === v",
        arg=version,
    )


def stings_on_screen(page: Any) -> dict[int, int]:
    seats = page.locator(".replay-seat").evaluate_all(
        "els => els.map(e => [Number(e.dataset.seat),"
        " Number(e.querySelector('.count b').textContent)])"
    )
    return {seat: stings for seat, stings in seats}


def api_get(base: str, person: dict[str, Any], path: str) -> Any:
    response = httpx.get(base + path, headers={"authorization": f"Bearer {person['token']}"})
    response.raise_for_status()
    return response.json()
