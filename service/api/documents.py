"""The committed contract: the OpenAPI document, the JSON Schemas of what we store and accept,
and the catalogue of error codes (docs/errors.md).

`python -m service documents` writes them; `tests/contract/test_documents.py` fails when the
committed copies drift from the code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from litestar.serialization import encode_json

from service.api.app import create_app
from service.api.errors_page import errors_markdown
from service.api.moves import AnyMove
from service.api.openapi import describe, served_document
from service.domain.audit import GameExport
from service.domain.rules.commands import Command
from service.domain.rules.events import Event
from service.domain.table_events import TableEventUnion

ROOT = Path(__file__).resolve().parents[2]


def _dump(document: Any) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def openapi_document() -> str:
    # Litestar's encoder knows the Structs that examples may hold; json.loads gives plain data.
    return _dump(json.loads(encode_json(served_document(create_app()))))


def errors_document() -> str:
    """docs/errors.md, from the one catalogue of problem codes (service/api/problems.py)."""
    return errors_markdown()


def json_schemas() -> dict[str, str]:
    """One file a union: what a game stream stores, what a table stream stores, the rules'
    commands, and the move bodies clients send."""
    unions: dict[str, Any] = {
        "game-events.schema.json": Event,
        "table-events.schema.json": TableEventUnion,
        "game-commands.schema.json": Command,
        "moves.schema.json": AnyMove,
        "game-export.schema.json": GameExport,
    }
    files = {}
    for name, union in unions.items():
        schema = msgspec.json.schema(union)
        describe(schema.get("$defs", {}), [union])
        files[name] = _dump(schema)
    return files


def documents() -> dict[Path, str]:
    files = {
        ROOT / "openapi" / "openapi.json": openapi_document(),
        ROOT / "docs" / "errors.md": errors_document(),
    }
    files.update({ROOT / "schemas" / name: text for name, text in json_schemas().items()})
    return files


def write_documents() -> list[Path]:
    written = []
    for path, text in documents().items():
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            written.append(path)
    return written
