"""Browser tests: the board in Debian's Chromium, driven by Playwright for Python.

Nothing downloads a browser: Playwright launches `/usr/bin/chromium` (`apt-get install
chromium`; `.ci/run` installs it when missing). Without it the tests are skipped, and the
session ends with a loud warning saying so, never silently.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.board import CHROMIUM, chromium_missing, launch, lowest_bee_too_low
from tests.deals import seeds_where, ties_when_lowest_played
from tests.live_server import serve

MISSING = chromium_missing()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not MISSING:
        return
    skip = pytest.mark.skip(reason=f"browser tests need Chromium: {MISSING}")
    for item in items:
        if "tests/browser/" in item.nodeid.replace("\\", "/"):
            item.add_marker(skip)
            config.stash.setdefault(_SKIPPED, []).append(item.nodeid)


_SKIPPED = pytest.StashKey[list[str]]()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    skipped = config.stash.get(_SKIPPED, [])
    if skipped:
        terminalreporter.write_sep("!", "BROWSER TESTS SKIPPED", red=True, bold=True)
        terminalreporter.write_line(
            f"{len(skipped)} browser tests did not run: {MISSING}. "
            f"Install it (apt-get install chromium) so {CHROMIUM} exists; CI (.ci/run) does.",
            red=True,
            bold=True,
        )


@pytest.fixture(scope="session")
def board_url(database_url: str) -> Iterator[str]:
    """The real app (turn clock on, as `make run` serves it) on a loopback port."""
    from service.api.app import create_app

    yield from serve(create_app(database_url))


@pytest.fixture(scope="session")
def too_low_url(database_url: str) -> Iterator[str]:
    """An app whose every 2-seat solo deal gives seat 1 a bee that is too low on turn 1: its
    server seeds are searched for that deal (tests/deals.py), the same on every run."""
    from service.api.app import create_app

    yield from serve(create_app(database_url, server_seeds=seeds_where(2, lowest_bee_too_low)))


@pytest.fixture(scope="session")
def tied_url(database_url: str) -> Iterator[str]:
    """An app whose 2-seat deals end in a shared win when both people play their lowest bee
    every turn and take the cheapest stem (tests/deals.py `ties_when_lowest_played`)."""
    from service.api.app import create_app

    yield from serve(create_app(database_url, server_seeds=seeds_where(2, ties_when_lowest_played)))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per test module. Not per session: Playwright's sync API keeps an event loop
    running in this thread while it is started, and the async tests of later modules need the
    thread's loop to themselves."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A fresh profile (its own localStorage) at desktop size, with reduced motion: the bees
    still fly in order, in a blink, so a whole game takes seconds."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: Any, board_url: str) -> Any:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(board_url + "/")
    yield page
    assert not errors, f"the page raised: {errors}"
