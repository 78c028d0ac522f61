from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.api.app import create_app
from tests.live_server import serve


@pytest.fixture(scope="session")
def live_server(database_url: str) -> Iterator[str]:
    """The real app served by uvicorn on a loopback port, in a thread of this process."""
    yield from serve(create_app(database_url))
