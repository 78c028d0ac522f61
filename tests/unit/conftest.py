"""The unit tier needs no database: a test here that asks for one (directly or through another
fixture) is an error at collection, before anything runs (`make test-unit` also sets
SWARM_TESTS_WITHOUT_DATABASE, so the fixture itself refuses)."""

from __future__ import annotations

import pytest

DATABASE_FIXTURES = frozenset({"database_url", "pool", "event_store"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/unit/" not in item.nodeid.replace("\\", "/"):
            continue
        wanted = DATABASE_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        if wanted:
            raise pytest.UsageError(
                f"{item.nodeid} asks for {', '.join(sorted(wanted))}: the unit tier runs"
                " without a database; move it to tests/integration"
            )
