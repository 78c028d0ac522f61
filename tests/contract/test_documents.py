"""The committed contract must match the code: regenerate with `make documents`."""

from __future__ import annotations

import pytest

from service.api.documents import documents


@pytest.mark.parametrize("path", sorted(documents()), ids=lambda p: p.name)
def test_committed_document_matches_the_code(path: object) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    expected = documents()[path]
    assert path.exists(), f"{path} is missing: run `make documents`"
    assert path.read_text() == expected, f"{path} drifted from the code: run `make documents`"


def test_every_operation_has_its_stable_operation_id() -> None:
    import json

    from service.api.documents import openapi_document

    paths = json.loads(openapi_document())["paths"]
    ids = {op["operationId"] for item in paths.values() for op in item.values()}
    assert {
        "createGuest",
        "createSoloTable",
        "getTable",
        "getGame",
        "submitMove",
        "listGameEvents",
        "playAgain",
        "health",
    } <= ids
