from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from tests.e2e.api_client import Api


@pytest.fixture(scope="session")
async def client(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    async with AsyncTestClient(app=create_app(database_url)) as client:
        yield client


@pytest.fixture
async def anon(client: AsyncTestClient[Any]) -> Api:
    return Api(client)


@pytest.fixture
async def ada(anon: Api) -> Api:
    return await anon.guest("Ada")
