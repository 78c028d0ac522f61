"""A person plays the board in Chromium: solo games by clicking, the too-low choice, a reload,
the keyboard, and the 375 px layout."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from service.domain.rules.cards import stings
from service.domain.rules.levels import LEVELS
from tests.browser.board import (
    account,
    game_id,
    guest,
    hand,
    play_turn,
    resume_as,
    start_solo,
    too_low_game,
    turn_number,
    wait_idle,
)


def picking(page: Any) -> None:
    """Play on (taking the cheapest stem if a bee was too low) until a bee is to be picked."""
    while wait_idle(page) == "choosing":
        play_turn(page)


def _api(base: str, page: Any, path: str) -> Any:
    token = page.evaluate("JSON.parse(localStorage.getItem('swarm.board.session')).token")
    response = httpx.get(base + path, headers={"authorization": f"Bearer {token}"})
    response.raise_for_status()
    return response.json()


def test_the_board_is_served_at_the_root_with_no_outside_resources(board_url: str) -> None:
    page = httpx.get(board_url + "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'src="board.js"' in page.text
    script = httpx.get(board_url + "/board.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    # No CDN: every file the board loads is served here (the board must work offline).
    from service.api.board import BOARD_DIRECTORY

    for path in BOARD_DIRECTORY.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), path.name
        assert not re.search(r"""import[^;]*from\s+["'](https?:)?//""", text), path.name


def test_setup_offers_two_to_eight_players_with_four_preselected(page: Any) -> None:
    radios = page.get_by_role("radiogroup", name="How many players").get_by_role("radio")
    assert [radios.nth(i).get_attribute("value") for i in range(radios.count())] == [
        str(n) for n in range(2, 9)
    ]
    assert page.get_by_role("radio", name=re.compile(r"^4\b")).is_checked()
    assert page.get_by_text("You and Buzz, Bumble, Honey.").is_visible()
    page.get_by_role("radio", name=re.compile(r"^6\b")).check(force=True)
    assert page.get_by_text("You and Buzz, Bumble, Honey, Clover, Pollen. Bees 1–64.").is_visible()
    levels = page.get_by_role("radiogroup", name="How the bees play").get_by_role("radio")
    assert [levels.nth(i).get_attribute("value") for i in range(levels.count())] == [
        "easy",
        "medium",
        "hard",
        "expert",
    ]
    assert levels.first.is_checked()  # the default, as the API's
    # each level with its rating (`make bench-bees`'s fit, from the registry), in the hint too
    shown = page.locator(".level-choice .level-rating").all_inner_texts()
    assert shown == [f"{lv.rating.points:,}" for lv in LEVELS.values()]
    page.get_by_role("radio", name=re.compile("^Expert")).check(force=True)
    assert f"Rated {LEVELS['expert'].rating.points:,}" in page.locator(".level-hint").inner_text()


def test_a_whole_solo_game_by_clicking_to_the_result_then_play_again(
    page: Any, board_url: str
) -> None:
    first = start_solo(page)  # 4 players, as preselected
    assert turn_number(page) == "Turn 1 of 10"
    assert page.locator(".scores .seat").count() == 4
    assert len(hand(page)) == 10

    # Turn 1: tap one bee, change it (a tap is changeable), see its forecast, CONFIRM.
    bees = page.locator(".hand button.bee")
    bees.nth(0).click()
    page.locator(".hand button.bee.tapped").wait_for()
    bees.nth(1).click()
    page.wait_for_function(
        "n => document.querySelector('.hand button.bee.tapped')?.dataset.bee == n",
        arg=hand(page)[1],
    )
    picked = hand(page)[1]
    assert page.locator(".forecast-text").inner_text().startswith(f"Forecast: bee {picked}")
    page.get_by_role("button", name="CONFIRM").click()
    wait_idle(page)
    # The picks were revealed low → high, and mine was among them.
    revealed = [int(b) for b in page.locator(".reveal .pick .bee .num").all_inner_texts()]
    assert len(revealed) == 4 and revealed == sorted(revealed) and picked in revealed
    assert picked not in hand(page)

    # A full stem's top slot says SIXTH BEE with the stings it holds.
    saw_sixth = False
    while wait_idle(page) != "ended":
        for stem in page.locator(".stem").all():
            numbers = [int(n) for n in stem.locator(".slot.filled .num").all_inner_texts()]
            if len(numbers) == 5:
                label = stem.locator(".slot.sixth").inner_text()
                assert "SIXTH BEE" in label and f"takes {sum(map(stings, numbers))}" in label
                saw_sixth = True
        play_turn(page)
    assert saw_sixth

    result = page.locator(".result")
    view = _api(board_url, page, f"/games/{first}")
    assert view["phase"] == "ended"
    shown = [int(t.split()[0]) for t in result.locator(".standings .count").all_inner_texts()]
    assert sorted(shown) == sorted(view["result"]["stings"])
    assert result.locator(".standings li.winner").count() == len(view["result"]["winners"])
    assert result.get_by_role("button", name="Back to setup").is_visible()

    result.get_by_role("button", name="Play again").click()
    page.wait_for_function("id => !location.hash.endsWith(id)", arg=first)
    page.locator(".hand button.bee").first.wait_for()
    second = game_id(page)
    assert second != first and turn_number(page) == "Turn 1 of 10" and len(hand(page)) == 10
    assert _api(board_url, page, f"/games/{second}")["table_id"] == view["table_id"]


def test_a_too_low_bee_chooses_its_stem_by_clicking_take(page: Any, too_low_url: str) -> None:
    person, game, bee = too_low_game(too_low_url)
    resume_as(page, too_low_url, person, game)
    page.get_by_role("button", name=re.compile(rf"^Bee {bee}, ")).click()
    page.locator(".hand button.bee.tapped").wait_for()
    assert "too low" in page.locator(".forecast-text").inner_text()
    page.get_by_role("button", name="CONFIRM").click()
    page.locator("button.take").first.wait_for()

    view = _api(too_low_url, page, f"/games/{game}")
    choice = view["choice"]
    assert view["phase"] == "choosing" and choice["yours"] and choice["bee"] == bee
    # TAKE and its cost on every stem; the banner names the cheapest.
    for cost in choice["costs"]:
        button = page.get_by_role("button", name=re.compile(rf"^Take STEM {cost['stem']}: "))
        assert f"{cost['stings']} ▼" in button.inner_text()
    assert f"STEM {choice['cheapest']} is the cheapest" in page.locator(".banner").inner_text()
    # The cheapest TAKE has the keyboard focus, ready for Enter.
    assert page.evaluate("document.activeElement.classList.contains('cheapest')")

    dearest = max(choice["costs"], key=lambda c: (c["stings"], c["stem"]))
    page.get_by_role("button", name=re.compile(rf"^Take STEM {dearest['stem']}: ")).click()
    page.locator("button.take").first.wait_for(state="detached")
    wait_idle(page)
    assert turn_number(page) == "Turn 2 of 10"
    log = _api(too_low_url, page, f"/games/{game}/events?after=0")
    taken = next(e["data"] for e in log["events"] if e["type"] == "stem_taken")
    assert taken["stem"] == dearest["stem"] and taken["chosen_by"] == "player"
    me = page.locator(".scores .seat.me .count b").inner_text()
    assert int(me) == dearest["stings"]
    first_stem = page.locator(f'.stem[data-stem="{dearest["stem"]}"] .slot.filled .num')
    assert first_stem.first.inner_text() == str(bee)


def test_a_reload_mid_game_resumes_where_it_was(page: Any, board_url: str) -> None:
    game = start_solo(page, players=3)
    play_turn(page)
    play_turn(page)
    picking(page)
    page.locator(".hand button.bee").nth(2).click()
    page.locator(".hand button.bee.tapped").wait_for()
    tapped = page.locator(".hand button.bee.tapped").get_attribute("data-bee")
    turn = turn_number(page)

    page.reload()
    page.locator(".hand button.bee").first.wait_for()
    assert game_id(page) == game and turn_number(page) == turn
    # The tap was saved by the service as it was made, so it survives the reload.
    assert page.locator(".hand button.bee.tapped").get_attribute("data-bee") == tapped
    version = _api(board_url, page, f"/games/{game}")["version"]
    page.wait_for_function("n => document.querySelectorAll('.log .ev').length === n", arg=version)
    page.get_by_role("button", name="CONFIRM").click()
    # The confirmed bee may be too low for every stem: then the board asks for a stem first.
    page.wait_for_function(
        "t => document.querySelector('.game-bar .turn').textContent !== t"
        " || document.querySelector('button.take.cheapest')",
        arg=turn,
    )
    if page.locator("button.take.cheapest").count():
        page.locator("button.take.cheapest").click()
        page.wait_for_function(
            "t => document.querySelector('.game-bar .turn').textContent !== t", arg=turn
        )

    # The setup screen offers the unfinished game after leaving it, too.
    page.goto(board_url + "/#/")
    page.get_by_role("link", name="Resume the game").click()
    page.locator(".hand button.bee").first.wait_for()
    assert game_id(page) == game


def test_every_action_by_keyboard_with_accessible_names(page: Any) -> None:
    start_solo(page, players=2)
    assert page.get_by_role("button", name=re.compile(r"^Bee \d+, \d stings?$")).count() == 10
    for n in range(1, 5):
        assert (
            page.get_by_role(
                "group", name=re.compile(rf"^STEM {n}: \d+ bees?, \d+ stings?")
            ).count()
            == 1
        )
    # Reach the hand with Tab, tap with Enter, move with the arrow key, tap again, CONFIRM.
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('.hand button.bee')"):
            break
    page.keyboard.press("Enter")
    page.locator(".hand button.bee.tapped").wait_for()
    page.keyboard.press("ArrowRight")
    second = page.evaluate("document.activeElement.dataset.bee")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "n => document.querySelector('.hand button.bee.tapped')?.dataset.bee === n", arg=second
    )
    assert (
        page.get_by_role("button", name=re.compile(rf"^Bee {second}, .*tapped")).get_attribute(
            "aria-pressed"
        )
        == "true"
    )
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('button.confirm')"):
            break
    assert page.evaluate("document.activeElement.matches('button.confirm')")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('button.take') || "
        "document.querySelector('.game-bar .turn').textContent === 'Turn 2 of 10'"
    )
    state = wait_idle(page)
    assert state == "choosing" or turn_number(page) == "Turn 2 of 10"
    if state == "choosing":
        page.keyboard.press("Enter")  # the cheapest TAKE has the focus
        page.locator("button.take").first.wait_for(state="detached")
        wait_idle(page)
    assert turn_number(page) == "Turn 2 of 10"
    # After the reveal the keyboard is back in the hand, ready for the next pick.
    assert page.evaluate("document.activeElement.matches('.hand button.bee')")


def test_a_phone_375_px_wide_shows_the_stings_along_the_top(browser: Any, board_url: str) -> None:
    ctx = browser.new_context(
        viewport={"width": 375, "height": 812},
        reduced_motion="reduce",
        has_touch=True,
        is_mobile=True,
    )
    try:
        page = ctx.new_page()
        page.goto(board_url + "/")
        start_solo(page, players=8)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"the page scrolls sideways: {width} px"
        scores = page.locator(".scores").bounding_box()
        stems = page.locator(".stems").bounding_box()
        assert scores["y"] + scores["height"] <= stems["y"], "stings are not above the stems"
        # Every seat in view, none scrolled off to the side (issue 25, item 9).
        seats = page.locator(".scores .seat").all()
        assert len(seats) == 8
        for seat in seats:
            box = seat.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 375
        for slot in page.locator(".stem .slot").all():
            box = slot.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 375
        for bee in page.locator(".hand button.bee").all():
            box = bee.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 375
        # The 55's seven stings stay on its card (issue 25, item 9).
        spill = page.evaluate(
            """async () => {
                const card = (await import('/bee.js')).beeCard(55, 7);
                document.querySelector('.stems .slot:not(.filled)').append(card);
                const c = card.getBoundingClientRect();
                const s = card.querySelector('.stings').getBoundingClientRect();
                card.remove();
                return [c.left - s.left, s.right - c.right];
            }"""
        )
        assert max(spill) <= 0, f"the 55's stings spill off its card by {spill} px"
        # The Leave confirmation fits the window.
        page.get_by_role("button", name="Leave", exact=True).tap()
        box = page.locator(".leave-confirm").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 375
        page.get_by_role("button", name="Stay").tap()
        page.locator(".hand button.bee").first.tap()
        page.locator(".hand button.bee.tapped").wait_for()
        page.get_by_role("button", name="CONFIRM").tap()
        wait_idle(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        # The lobby does not scroll sideways either.
        page.goto(board_url + "/#/lobby")
        page.locator(".lobby-table, .lobby .empty").first.wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
    finally:
        ctx.close()


def test_a_dropped_connection_is_retried_from_the_last_event_and_loses_nothing(
    page: Any, board_url: str
) -> None:
    """On the polling path (a browser without EventSource): requests for the log fail for a
    while; the board says so, keeps retrying from the last version it has, and loses nothing.
    (With EventSource, reconnecting with Last-Event-ID is the browser's own, tested server-side.)"""
    page.add_init_script("delete window.EventSource")
    page.goto(page.url.split("#")[0])
    game = start_solo(page, players=3)
    play_turn(page)
    picking(page)
    page.route("**/games/*/events?*", lambda route: route.abort("connectionreset"))
    before = hand(page)
    page.locator(".hand button.bee").first.click()
    page.locator(".hand button.bee.tapped").wait_for()
    page.get_by_role("button", name="CONFIRM").click()
    problem = page.locator("#problem .problem")
    problem.wait_for(timeout=20_000)
    assert "No connection" in problem.inner_text() and "retrying" in problem.inner_text()
    page.unroute("**/games/*/events?*")
    page.wait_for_function(
        "n => document.querySelectorAll('.hand button.bee').length < n",
        arg=len(before),
        timeout=30_000,
    )
    version = _api(board_url, page, f"/games/{game}")["version"]
    page.wait_for_function("n => document.querySelectorAll('.log .ev').length === n", arg=version)
    versions = page.locator(".log .ev").evaluate_all("es => es.map(e => Number(e.dataset.version))")
    assert sorted(versions) == list(range(1, version + 1))
    assert page.locator("#problem .problem").count() == 0


def test_medium_bees_are_chosen_at_setup_and_list_my_games_resumes_a_cleared_browser(
    page: Any, board_url: str
) -> None:
    page.get_by_role("radio", name=re.compile("^Medium")).check(force=True)
    game = start_solo(page, players=3)
    view = _api(board_url, page, f"/games/{game}")
    assert [s["level"] for s in view["seats"]] == [None, "medium", "medium"]

    # This browser forgets where it sat; the service still knows (listMyGames).
    page.evaluate("localStorage.removeItem('swarm.board.place')")
    page.goto(board_url + "/#/")
    page.reload()
    page.get_by_role("link", name="Resume the game").click()
    page.locator(".hand button.bee").first.wait_for()
    assert game_id(page) == game


def test_the_no_connection_banner_comes_at_once_and_clears_at_once_when_back(
    page: Any, context: Any
) -> None:
    """Issue 25, item 8: offline, the board says so at once (the clock may be running); back
    online, the banner goes within a second and a half, not at the next event."""
    start_solo(page, players=2)
    page.locator("#meadow-panel .log .ev").first.wait_for(state="attached")  # the stream is open
    context.set_offline(True)
    problem = page.locator("#problem .problem")
    problem.wait_for(timeout=2_000)
    assert "No connection" in problem.inner_text()
    page.wait_for_timeout(3_000)
    context.set_offline(False)
    problem.wait_for(state="detached", timeout=1_500)
    page.locator(".hand button.bee").first.click()  # and the board works again
    page.locator(".hand button.bee.tapped").wait_for()


def test_stings_come_from_the_api_in_views_and_log_entries(page: Any, board_url: str) -> None:
    """Issue 25, item 13: the board draws stings from what the API says (the view's
    `hand_stings`, the log entries' `stings`, `bee_stings`, `taken_stings`), never from a rule
    of its own: a view that said otherwise would be drawn as it says."""
    game = start_solo(page, players=3)
    play_turn(page)
    play_turn(page)
    log = _api(board_url, page, f"/games/{game}/events?after=0")["events"]
    for entry in log:
        d = entry["data"]
        if entry["type"] == "picks_revealed":
            assert entry["stings"] == [stings(p["bee"]) for p in d["picks"]]
        if entry["type"] in ("bee_landed", "stem_taken"):
            assert entry["bee_stings"] == stings(d["bee"])
            assert entry["taken_stings"] == [stings(b) for b in d["taken"]]

    def nine(route: Any) -> None:
        response = route.fetch()
        view = response.json()
        view["hand_stings"] = [9] * len(view["hand"])
        route.fulfill(response=response, json=view)

    page.route(f"**/games/{game}", nine)
    page.reload()
    page.locator(".hand button.bee").first.wait_for()
    labels = page.locator(".hand button.bee").evaluate_all(
        "bs => bs.map(b => b.getAttribute('aria-label'))"
    )
    assert labels and all(label.endswith(", 9 stings") for label in labels), labels


def test_expert_bees_show_that_they_are_thinking_while_they_answer(
    page: Any, board_url: str
) -> None:
    """Seven expert bees spend about half a second of CPU on their next picks: after 100 ms
    without the answer to a confirm, the banner says the bees are thinking, then no more."""
    page.get_by_role("radio", name=re.compile("^Expert")).check(force=True)
    start_solo(page, players=8)
    page.locator(".hand button.bee").last.click()  # the highest bee: never too low on turn 1
    page.locator(".hand button.bee.tapped").wait_for()
    page.get_by_role("button", name="CONFIRM").click()
    thinking = page.locator(".banner .thinking", has_text="The bees are thinking…")
    thinking.wait_for(timeout=10_000)
    thinking.wait_for(state="detached", timeout=60_000)
    page.locator(".game-bar .turn", has_text="Turn 2 of 10").wait_for(timeout=30_000)


@pytest.mark.parametrize(("width", "height"), [(375, 740), (390, 844), (320, 640)])
def test_every_menu_item_shows_on_a_phone_outside_a_game(
    browser: Any, board_url: str, width: int, height: int
) -> None:
    """On a phone the menu used to scroll sideways behind the "Log in" chip: Leaderboard and
    Profile were out of sight. Outside a game it now takes a row of its own: every item is
    inside the window, none under the chip."""
    ctx = browser.new_context(
        viewport={"width": width, "height": height}, is_mobile=True, has_touch=True
    )
    try:
        page = ctx.new_page()
        for screen in ("#/", "#/lobby", "#/leaderboard"):
            page.goto(board_url + "/" + screen)
            page.locator("#identity .me-chip, #identity a, #identity button").first.wait_for()
            chip = page.locator("#identity").bounding_box()
            links = page.locator("nav a")
            assert links.count() == 5
            for k in range(links.count()):
                box = links.nth(k).bounding_box()
                name = links.nth(k).inner_text()
                assert box is not None, name
                assert box["x"] >= 0 and box["x"] + box["width"] <= width, (screen, name, box)
                overlaps_chip = (
                    chip is not None
                    and box["y"] < chip["y"] + chip["height"]
                    and chip["y"] < box["y"] + box["height"]
                    and box["x"] + box["width"] > chip["x"]
                )
                assert not overlaps_chip, (screen, name, box, chip)
    finally:
        ctx.close()


@contextmanager
def _lobby_on_a_phone(
    browser: Any, board_url: str, host: dict[str, Any], stake: int
) -> Iterator[Any]:
    """`host` opens a 4-seat table at `stake`; a guest opens the lobby at 375 px: the page."""
    opened = httpx.post(
        f"{board_url}/tables",
        json={"seats": 4, "stake": stake},
        headers={"authorization": f"Bearer {host['token']}"},
    )
    assert opened.status_code == 201, opened.text
    ctx = browser.new_context(
        viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True
    )
    try:
        page = ctx.new_page()
        page.goto(board_url + "/#/lobby")
        page.get_by_placeholder("Your name").fill("Gwen")
        page.get_by_role("button", name="Play as guest").click()
        yield page
    finally:
        ctx.close()


def test_a_lobby_buy_in_reads_on_one_line_on_a_phone(browser: Any, board_url: str) -> None:
    """The lobby's "💰50 buy-in" used to break after the coin at 375 px; it is one line."""
    host = account(board_url, "Host")
    with _lobby_on_a_phone(browser, board_url, host, stake=50) as page:
        row = page.locator(".lobby-table tr", has_text=host["name"])
        label = row.locator(".nowrap", has_text="💰50 buy-in")
        label.wait_for()
        lines = label.evaluate("el => el.getClientRects().length")
        assert lines == 1, f"'💰50 buy-in' is drawn on {lines} lines"
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"the lobby scrolls sideways: {width} px"


def test_a_name_of_forty_letters_in_one_word_wraps_in_the_lobby_on_a_phone(
    browser: Any, board_url: str
) -> None:
    """A name is one word of up to 40 characters (`names.NAME_MAX`): the lobby's host cell wraps
    it rather than push the page past 375 px (it did, 386 px, once such a table was open)."""
    long_name = "Bumblebee" + uuid.uuid4().hex[:31]
    host = guest(board_url, long_name)
    assert len(host["name"]) == 40
    with _lobby_on_a_phone(browser, board_url, host, stake=0) as page:
        page.locator(".lobby-table td.who", has_text=long_name).wait_for()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"the lobby scrolls sideways: {width} px"


def test_a_refusal_shows_where_the_person_is_looking_on_a_phone(
    browser: Any, board_url: str
) -> None:
    """At 375×740 the setup form is longer than the window: a refused start (here 429
    too-many-sign-ups) from the bottom of it showed its alert at the top of the page, out of
    sight. The alert now stays in the window. (Into the meadow is on the first screen now,
    issue 44 item 5: the person scrolls the form down to the button's last place first.)"""
    ctx = browser.new_context(
        viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True
    )
    try:
        page = ctx.new_page()
        problem = {
            "type": "https://swarm.example/problems/too-many-sign-ups",
            "title": "Too many sign-ups from your address",
            "status": 429,
            "detail": "Try again in a minute.",
            "code": "too-many-sign-ups",
        }
        page.route(
            "**/guests",
            lambda route: route.fulfill(
                status=429,
                content_type="application/problem+json",
                headers={"retry-after": "60"},
                body=json.dumps(problem),
            ),
        )
        page.goto(board_url + "/")
        start = page.get_by_role("button", name="Into the meadow")
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        assert page.evaluate("window.scrollY") > 0, "the form fits the first screen"
        start.click()
        alert = page.get_by_role("alert").filter(has_text="Too many sign-ups")
        alert.wait_for()
        box = alert.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 740, box
    finally:
        ctx.close()


def test_a_module_the_server_shed_is_fetched_again_and_the_board_comes_up(
    context: Any, board_url: str
) -> None:
    """A busy server sheds a request (503) with no regard for what it is: when it is one of the
    board's modules, the whole module graph fails. `boot.js` says so and loads the page again;
    the second time every module comes, and the board is whole (the setup screen, no problem
    left on it). A module that always fails is given up on after three tries, with advice."""
    page = context.new_page()
    shed: list[str] = []

    def once(route: Any) -> None:
        if not shed:
            shed.append(route.request.url)
            route.fulfill(status=503, body="busy")
        else:
            route.continue_()

    page.route("**/game.js", once)
    page.goto(board_url + "/")
    page.get_by_role("button", name="Into the meadow").wait_for(timeout=20_000)
    assert shed == [board_url + "/game.js"]
    assert page.locator("#problem .problem").count() == 0
    assert page.evaluate("sessionStorage.getItem('swarm.board.boot-retries')") is None

    broken = context.new_page()
    broken.route("**/dom.js", lambda route: route.fulfill(status=503, body="busy"))
    broken.goto(board_url + "/")
    broken.get_by_text("Reload the page in a moment").wait_for(timeout=30_000)
    assert broken.get_by_role("button", name="Into the meadow").count() == 0
