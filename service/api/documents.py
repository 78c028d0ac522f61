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
from service.api.moves import AnyMove
from service.api.openapi import describe, served_document
from service.api.problems import CATALOGUE
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
    lines = [
        "# Error codes",
        "",
        "Every refusal is an RFC 9457 problem (`application/problem+json`) with a `code` that",
        "clients switch on; `type` is `urn:swarm:problem:<code>`. This is the whole catalogue:",
        "the OpenAPI document lists the same codes as the enum of `Problem.code`, and a test",
        "fails when the server can answer with a code missing here. Generated from",
        "`service/api/problems.py` by `python -m service documents`.",
        "",
        "A 5xx is never the client's fault; a 4xx never changes anything on the server.",
        "",
        "**Retrying safely.** Every POST but `submitMove` takes an `Idempotency-Key` header (16 to",
        "255 visible ASCII characters: a new UUID for each new request). Retried with the same key",
        "and the same request within 24 hours, it is answered as the first time (status and body,",
        "with `Idempotent-Replayed: true`) and nothing is done again; a 4xx or 5xx is not kept, so",
        "after one the same key runs the request again. `idempotency-key-reused` and",
        "`idempotency-key-in-use` below are its refusals. A move's `move_id` is its own key (per",
        "player per game); a repeat is answered with `Idempotent-Replayed: true` too. Keys are",
        "scoped to the caller's bearer token (to its address without one), and what is stored is",
        'readable only with the key (README, "Retrying safely").',
        "",
        "**Retry by category.** Every problem says whether the same request, sent again",
        "unchanged, can succeed: `retryable` is true for a passing condition (load, a race, a",
        "rate limit: wait `Retry-After` seconds when the answer has that header, then resend it,",
        "with its `Idempotency-Key` or `move_id`), false when the request or the state it meets",
        "must change first. A client needs no list of codes to decide; the column below is the",
        "same value, code by code.",
        "",
        "| Code | Status | What it means | What to do | Retry as is |",
        "|---|---|---|---|---|",
    ]
    for code, entry in sorted(CATALOGUE.items(), key=lambda item: (item[1].status, item[0])):
        meaning = entry.meaning.replace("|", "\\|")
        action = entry.action.replace("|", "\\|")
        again = "yes" if entry.retryable else "no"
        lines.append(f"| `{code}` | {entry.status} | {meaning} | {action} | {again} |")
    return "\n".join(lines) + "\n"


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
