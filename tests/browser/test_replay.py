"""The replay screen (#/replay/<game id>, service/board/replay.js) in Chromium: a finished
4-seat game stepped through by keyboard to the end and back, each turn's stings on screen equal
to the API's, turns, play and pause; each step's event held to the hash chain, and a tampered
answer caught."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.board import lowest_bee_too_low
from tests.browser.replay import (
    api_get,
    finished_game,
    open_replay,
    position,
    stings_on_screen,
    wait_position,
)
from tests.deals import seeds_where
from tests.live_server import serve


@pytest.fixture(scope="module")
def rigged_url(database_url: str) -> Iterator[str]:
    """An app whose 4-seat deals give seat 1 a bee too low on turn 1 (tests/deals.py)."""
    from service.api.app import create_app

    yield from serve(create_app(database_url, server_seeds=seeds_where(4, lowest_bee_too_low)))


@pytest.fixture(scope="module")
def game(rigged_url: str) -> tuple[dict[str, Any], str]:
    return finished_game(rigged_url)


def test_a_finished_game_replays_by_keyboard_to_the_end_and_back(
    page: Any, rigged_url: str, game: tuple[dict[str, Any], str]
) -> None:
    person, gid = game
    steps = api_get(rigged_url, person, f"/games/{gid}/steps")
    latest = steps["latest"]
    lasts = {t["last"]: t["turn"] for t in steps["turns"]}
    kinds = {s["version"]: s["kind"] for s in steps["steps"]}
    assert {"sixth_bee", "too_low", "take"} <= set(kinds.values())
    open_replay(page, rigged_url, person, gid)
    page.keyboard.press("Home")
    wait_position(page, 1)
    checked_turns = []
    for version in range(2, latest + 1):
        page.keyboard.press("ArrowRight")
        wait_position(page, version)
        assert page.locator(".replay-step").get_attribute("data-kind") == kinds[version]
        if version in lasts:
            answer = api_get(rigged_url, person, f"/games/{gid}/states/{version}")
            expected = {s["seat"]: s["stings"] for s in answer["view"]["seats"]}
            assert stings_on_screen(page) == expected, (lasts[version], version)
            # Every hand shows, as the API has it at that version.
            hands = page.locator(".replay-seat").evaluate_all(
                "els => els.map(e => [...e.querySelectorAll('.replay-hand .bee')]"
                ".map(b => Number(b.dataset.bee)))"
            )
            assert hands == [s["hand"] for s in answer["seats"]]
            checked_turns.append(lasts[version])
        if kinds[version] == "too_low":
            assert page.locator(".replay-banner").inner_text().count("too low")
            assert page.locator(".replay-stems .cost").count() == 4
            assert page.locator(".replay-reveal .pick.too-low").count() == 1
        if kinds[version] == "sixth_bee":
            assert "took" in page.locator(".replay-stems .stem.flash .replay-took").inner_text()
    assert checked_turns == list(range(1, 11))
    page.keyboard.press("ArrowRight")  # past the end: stays there
    page.keyboard.press("End")
    wait_position(page, latest)
    assert (
        "wins" in page.locator(".replay-banner").inner_text()
        or "share" in page.locator(".replay-banner").inner_text()
    )
    for version in range(latest - 1, 0, -1):
        page.keyboard.press("ArrowLeft")
        wait_position(page, version)
    assert position(page) == 1


def test_turns_play_and_pause(page: Any, rigged_url: str, game: tuple[dict[str, Any], str]) -> None:
    person, gid = game
    steps = api_get(rigged_url, person, f"/games/{gid}/steps")
    starts = [t["start"] for t in steps["turns"]]
    open_replay(page, rigged_url, person, gid)
    wait_position(page, starts[0])  # it opens at turn 1
    page.keyboard.press("Shift+ArrowRight")
    wait_position(page, starts[1])
    page.keyboard.press("Shift+ArrowLeft")
    wait_position(page, starts[0])
    page.get_by_label("Jump to turn").select_option("7")
    wait_position(page, starts[6])
    page.get_by_label("Speed").select_option("4")
    page.keyboard.press("Space")
    page.wait_for_function(
        "v => Number(document.querySelector('.replay-pos').textContent.split(' ')[1]) >= v + 3",
        arg=starts[6],
    )
    page.keyboard.press("Space")
    paused = position(page)
    page.wait_for_timeout(1200)
    assert position(page) == paused
    # Space on a focused control presses that control only: here, Play, once.
    page.get_by_role("button", name="Play (space)").focus()
    page.keyboard.press("Space")
    page.wait_for_function(
        "v => Number(document.querySelector('.replay-pos').textContent.split(' ')[1]) > v",
        arg=paused,
    )
    page.get_by_role("button", name="Pause (space)").click()
    paused = position(page)
    page.wait_for_timeout(1200)
    assert position(page) == paused
    assert page.get_by_role("button", name="Play (space)").count() == 1


CHAIN_SETTLED = (
    "() => ['ok', 'failed', 'unavailable']"
    ".includes(document.querySelector('.chain')?.dataset.chain)"
)


def _check_at(page: Any, version: int) -> str:
    page.get_by_role("button", name=f"v{version} ", exact=False).first.click()
    wait_position(page, version)
    page.wait_for_function("() => document.querySelector('.step-check')?.dataset.check")
    return str(page.locator(".step-check").get_attribute("data-check"))


def test_the_deal_checks_out_and_every_step_is_the_chains(
    page: Any, rigged_url: str, game: tuple[dict[str, Any], str]
) -> None:
    person, gid = game
    steps = api_get(rigged_url, person, f"/games/{gid}/steps")
    open_replay(page, rigged_url, person, gid)
    page.wait_for_function("() => document.querySelector('.verdict')?.dataset.verdict")
    assert page.locator(".verdict").get_attribute("data-verdict") == "ok"
    page.wait_for_function(CHAIN_SETTLED)
    for version in range(1, steps["latest"] + 1, 7):
        assert _check_at(page, version) == "ok", version
    assert page.locator(".chain").get_attribute("data-chain") == "ok"
    assert "recomputed in this browser" in page.locator(".chain").inner_text()


def test_a_tampered_export_breaks_the_chain_from_that_step_on(
    page: Any, rigged_url: str, game: tuple[dict[str, Any], str]
) -> None:
    """The export rewritten on its way in (one landing moved to another stem): the chain, as
    fairness.js recomputes it, breaks there; steps before it still check out."""
    person, gid = game
    steps = api_get(rigged_url, person, f"/games/{gid}/steps")
    landing = next(s["version"] for s in steps["steps"] if s["kind"] == "landing")

    def tamper(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        row = body["events"][landing - 1]
        row["data"]["stem"] = row["data"]["stem"] % 4 + 1
        route.fulfill(response=response, body=json.dumps(body))

    page.route(f"**/games/{gid}/export", tamper)
    open_replay(page, rigged_url, person, gid)
    page.wait_for_function(CHAIN_SETTLED)
    assert page.locator(".chain").get_attribute("data-chain") == "failed"
    assert f"v{landing}" in page.locator(".chain").inner_text()
    assert _check_at(page, landing - 1) == "ok"
    assert _check_at(page, landing) == "failed"
    assert _check_at(page, landing + 1) == "failed"


@pytest.mark.parametrize("what", ["data", "hash"])
def test_a_tampered_answer_fails_its_step_check(
    page: Any, rigged_url: str, game: tuple[dict[str, Any], str], what: str
) -> None:
    """One version's answer rewritten on its way in (its event's data, or its hash): that step
    fails the check and says why; its neighbours still pass."""
    person, gid = game
    steps = api_get(rigged_url, person, f"/games/{gid}/steps")
    sixth = next(s["version"] for s in steps["steps"] if s["kind"] == "sixth_bee")

    def tamper(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        if what == "data":
            body["event"]["data"]["taken"] = [*sorted(body["event"]["data"]["taken"])[1:], 99]
        else:
            body["event"]["hash"] = "0" * 64
        route.fulfill(response=response, body=json.dumps(body))

    page.route(f"**/games/{gid}/states/{sixth}", tamper)
    open_replay(page, rigged_url, person, gid)
    page.wait_for_function(CHAIN_SETTLED)
    assert _check_at(page, sixth) == "failed"
    text = page.locator(".step-check").inner_text()
    assert ("is not the export's event" if what == "data" else "is not the chain's") in text
    assert _check_at(page, sixth - 1) == "ok"
    assert _check_at(page, sixth + 1) == "ok"


def test_a_landing_bee_flies_from_the_reveal_row_to_its_stem(
    browser: Any, rigged_url: str, game: tuple[dict[str, Any], str]
) -> None:
    """Stepping forward onto a landing animates the bee from its pick in the reveal row to its
    slot; stepping back draws the state without a flight."""
    person, gid = game
    steps = api_get(rigged_url, person, f"/games/{gid}/steps")["steps"]
    landing = next(
        s["version"]
        for s in steps
        if s["kind"] == "landing" and steps[s["version"] - 2]["kind"] == "landing"
    )
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        open_replay(page, rigged_url, person, gid)
        page.get_by_role("button", name=f"v{landing - 1} ", exact=False).first.click()
        wait_position(page, landing - 1)
        page.keyboard.press("ArrowRight")
        wait_position(page, landing)
        flight = page.evaluate(
            "() => document.querySelector('.replay-stems .bee.arrived')"
            "?.getAnimations().map(a => a.effect.getKeyframes()[0].transform)"
        )
        assert flight and flight[0].startswith("translate("), flight
        page.keyboard.press("ArrowLeft")
        wait_position(page, landing - 1)
        assert (
            page.evaluate(
                "() => document.querySelector('.replay-stems .bee.arrived').getAnimations().length"
            )
            == 0
        )
    finally:
        context.close()


def test_what_would_the_bee_have_played_shows_the_analysis_of_the_seat_and_turn_shown(
    page: Any, rigged_url: str, game: tuple[dict[str, Any], str]
) -> None:
    """On a finished game: jump to turn 3, choose Bumble (seat 3), press the button; the panel
    shows analyseTurn's own answer for that seat and turn: the pick, the bee played, and every
    bee of the hand then with its estimated stings."""
    person, gid = game
    open_replay(page, rigged_url, person, gid)
    panel = page.get_by_role("region", name="What would the bee have played?")
    panel.get_by_role("button", name="What would the bee have played?").wait_for()
    page.get_by_label("Jump to turn").select_option("3")
    panel.get_by_text("at turn 3").wait_for()
    panel.get_by_label("Seat to analyse").select_option("3")
    panel.get_by_role("button", name="What would the bee have played?").click()
    shown = panel.locator(".analysis")
    shown.wait_for(timeout=30_000)
    expected = api_get(rigged_url, person, f"/games/{gid}/analysis?seat=3&turn=3")
    assert shown.get_attribute("data-pick") == str(expected["pick"])
    assert (shown.get_attribute("data-seat"), shown.get_attribute("data-turn")) == ("3", "3")
    assert f"would have played {expected['pick']}" in shown.locator(".analysis-pick").inner_text()
    rows = shown.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => [Number(r.dataset.bee), r.querySelector('td').textContent,"
        " r.querySelector('td.win').textContent])"
    )
    assert rows == [
        [e["bee"], f"{e['stings']:.2f}", f"{math.floor(100 * e['win'] + 0.5)}%"]
        for e in expected["estimates"]
    ]
    assert [e["bee"] for e in expected["estimates"]] == expected["hand"] and len(rows) == 8
    assert shown.locator("tr.pick").get_attribute("data-bee") == str(expected["pick"])
    # The pick's row is a row like the others, its four cells side by side (issue 44, item 3:
    # it took the reveal strip's `.pick` column and stacked them).
    for row in ("tr.pick", "tbody tr:not(.pick)"):
        tops = (
            shown.locator(row)
            .first.locator("th, td")
            .evaluate_all("cells => cells.map(c => Math.round(c.getBoundingClientRect().top))")
        )
        assert len(tops) == 4 and len(set(tops)) == 1, (row, tops)
    assert shown.locator("tr.played").get_attribute("data-bee") == str(expected["played"])
    # another turn is another question: the button comes back; the answer is kept per turn
    page.get_by_label("Jump to turn").select_option("4")
    panel.get_by_role("button", name="What would the bee have played?").wait_for()
    page.get_by_label("Jump to turn").select_option("3")
    panel.locator(".analysis").wait_for()


@pytest.mark.parametrize("size", [(1366, 768), (390, 844)], ids=["laptop", "phone"])
def test_the_stems_and_the_steps_change_are_seen_together(
    page: Any, rigged_url: str, game: tuple[dict[str, Any], str], size: tuple[int, int]
) -> None:
    """Issue 44, item 4: at a laptop's and a phone's size, the step's words and all four stems
    are in the window without scrolling (stems 3-4 were off-screen, on a phone all four at its
    bottom edge), and no card's stings spill off it (5-sting marks overflowed small cards)."""
    person, gid = game
    width, height = size
    page.set_viewport_size({"width": width, "height": height})
    open_replay(page, rigged_url, person, gid)
    for key in (None, "End"):  # as it opens (turn 1, every hand full), then the last step
        if key:
            page.keyboard.press(key)
        page.wait_for_timeout(300)
        boxes = page.evaluate(
            """() => [...document.querySelectorAll('.replay-step, .replay-stems .stem')]
                .map(e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; })"""
        )
        assert len(boxes) == 5
        for top, bottom in boxes:
            assert top >= 0 and bottom <= height, (key, size, boxes)
        spills = page.evaluate(
            """() => [...document.querySelectorAll('.replay-screen .bee')].map(card => {
                const c = card.getBoundingClientRect();
                const s = card.querySelector('.stings').getBoundingClientRect();
                return Math.max(c.left - s.left, s.right - c.right);
            })"""
        )
        assert spills and max(spills) <= 0, f"stings spill off a card by {max(spills)} px"


def test_jump_to_turn_keeps_the_turn_shown_and_the_legend_names_the_seat(
    page: Any, rigged_url: str, game: tuple[dict[str, Any], str]
) -> None:
    """Issue 44, item 7: after a jump (and a step, which redraws the controls) "Jump to turn"
    still shows the turn on screen, not "Turn…"; the analysis legend says whose bee ✓ marks."""
    person, gid = game
    open_replay(page, rigged_url, person, gid)
    jump = page.get_by_label("Jump to turn")
    jump.select_option("3")
    page.locator(".replay-bar .turn").get_by_text("Turn 3 of").wait_for()
    assert jump.input_value() == "3"
    page.get_by_role("button", name="Step forward (→)").click()
    page.wait_for_timeout(300)
    turn = page.locator(".replay-bar .turn").inner_text().split()[1]
    assert jump.input_value() == turn
    page.keyboard.press("Shift+ArrowRight")
    page.locator(".replay-bar .turn").get_by_text("Turn 4 of").wait_for()
    assert jump.input_value() == "4"
    panel = page.get_by_role("region", name="What would the bee have played?")
    panel.get_by_role("button", name="What would the bee have played?").click()
    legend = panel.locator(".legend")
    legend.wait_for(timeout=30_000)
    assert "✓ the bee Ada played" in legend.inner_text()


def test_every_turn_against_the_bee_shows_what_each_pick_cost_and_goes_to_its_turn(
    page: Any, rigged_url: str, game: tuple[dict[str, Any], str]
) -> None:
    """On a finished game, for Buzz (seat 2): "Every turn against the bee" draws analyseGame's
    own answer, a bar a turn with its cost, the costliest turns marked and the sum said; a
    turn's bar shows that turn."""
    person, gid = game
    open_replay(page, rigged_url, person, gid)
    panel = page.get_by_role("region", name="What would the bee have played?")
    panel.get_by_label("Seat to analyse").select_option("2")
    panel.get_by_role("button", name="Every turn against the bee").click()
    shown = panel.locator(".review")
    shown.wait_for(timeout=60_000)
    expected = api_get(rigged_url, person, f"/games/{gid}/review?seat=2")
    assert shown.get_attribute("data-seat") == "2"
    bars = shown.locator("li.review-turn").evaluate_all(
        "lis => lis.map(li => [Number(li.dataset.turn), li.dataset.cost === '' ? null :"
        " Number(li.dataset.cost), li.classList.contains('worst')])"
    )
    assert bars == [
        [t["turn"], t["cost"], t["turn"] in expected["worst"]] for t in expected["turns"]
    ]
    said = shown.locator(".review-sum").inner_text()
    if expected["worst"]:
        assert f"{expected['cost']:.2f}" in said
        assert ", ".join(map(str, expected["worst"])) in said
    else:
        assert "cost nothing" in said
    target = expected["worst"][0] if expected["worst"] else 5
    shown.locator(f"li.review-turn[data-turn='{target}'] button").click()
    panel.get_by_text(f"at turn {target}").wait_for()
