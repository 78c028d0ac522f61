from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.api.app import create_app
from service.settings import Settings
from tests.live_server import serve


@pytest.fixture(scope="session")
def live_server(database_url: str) -> Iterator[str]:
    """The real app served by uvicorn on a loopback port, in a thread of this process.

    The per-address sign-up limits are off: every generated `POST /guests` comes from
    127.0.0.1, and the limit is counted across the whole test session in the database, so with
    it on the same request would answer 201 early and 429 later. A stateful run whose links
    depend on that answer then sees different data for the same choices, which Hypothesis
    reports as a flaky strategy. The limits have their own tests (tests/e2e/test_limits.py).
    """
    settings = Settings.from_env().with_(guests_per_hour=0, accounts_per_hour=0)
    yield from serve(create_app(database_url, settings=settings))
