"""The TypeScript client nobody here writes: `openapi-typescript` generates the types from the
committed document and `openapi-fetch` calls the API with them (pinned in
clients/typescript/package-lock.json, installed with `npm ci` from Debian's Node). `tsc
--strict` compiles the programs in clients/typescript/src against the generated types (a
wrong document or a needed cast fails here), then Node runs them against the real server."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.contract.test_generated_client import with_newer_values

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"
DOCUMENT = ROOT / "openapi" / "openapi.json"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="Node.js and npm are missing (apt-get install nodejs npm): the TypeScript client "
    "tests are SKIPPED",
)


def _run(*command: str, stdin: str | None = None, timeout: float = 300) -> str:
    done = subprocess.run(
        command, cwd=CLIENT, input=stdin, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def built() -> Path:
    """Modules installed from the lock file (`npm ci`, once per checkout), the types generated
    from the committed document, and the programs compiled with `tsc --strict`."""
    if not (CLIENT / "node_modules" / ".package-lock.json").exists():
        _run("npm", "ci", "--no-audit", "--no-fund")
    bin_dir = CLIENT / "node_modules" / ".bin"
    # A field with a default is optional in a request: without this flag openapi-typescript
    # makes it required (its default suits answers only).
    _run(
        str(bin_dir / "openapi-typescript"),
        str(DOCUMENT),
        "--default-non-nullable",
        "false",
        "-o",
        "src/schema.d.ts",
    )
    shutil.rmtree(CLIENT / "build", ignore_errors=True)
    _run(str(bin_dir / "tsc"), "-p", ".")
    return CLIENT / "build"


def test_the_typescript_client_takes_values_a_newer_server_adds(
    built: Path, live_server: str
) -> None:
    guest = httpx.post(f"{live_server}/guests", json={"name": "Newer"}).json()
    headers = {"Authorization": f"Bearer {guest['token']}"}
    table = httpx.post(f"{live_server}/solo-tables", json={"players": 3}, headers=headers).json()
    game_id = table["game"]["game_id"]
    view = httpx.get(f"{live_server}/games/{game_id}", headers=headers).json()
    page = httpx.get(f"{live_server}/games/{game_id}/events", headers=headers).json()
    known: dict[str, Any] = json.loads(
        _run(
            "node",
            str(built / "newer.js"),
            stdin=json.dumps(
                {
                    "view": view,
                    "page": page,
                    "problem": {**with_newer_values(view, page)[2], "code": "not-found"},
                }
            ),
        )
    )
    assert known["phase"] == "known phase picking"
    assert known["events"][0].startswith("deal committed "), known
    newer_view, newer_page, problem = with_newer_values(view, page)
    newer: dict[str, Any] = json.loads(
        _run(
            "node",
            str(built / "newer.js"),
            stdin=json.dumps({"view": newer_view, "page": newer_page, "problem": problem}),
        )
    )
    assert newer == {
        "phase": "unknown phase bidding",
        "levels": ["grandmaster", "grandmaster"],
        "events": [*known["events"], "an event of type bee_buzzed"],
        "code": "table-on-fire",
    }


def test_the_typescript_client_plays_solo_and_online_following_the_streams(
    built: Path, live_server: str
) -> None:
    """clients/typescript/src/play.ts: a solo game, then a two-person online game played (again)
    until someone has a too-low choice; every game followed through streamGameEvents as NDJSON,
    hung up once and resumed with Last-Event-ID, to its end; the table's stream as NDJSON."""
    out: dict[str, Any] = json.loads(_run("node", str(built / "play.js"), live_server, timeout=600))
    games = [out["solo"], *out["online"]]
    for game in games:
        # Every version once, in order, across the reconnect, up to the game's last event.
        assert game["versions"] == list(range(1, game["final_version"] + 1)), game
        assert game["reconnects"] == 1 and game["ended"], game
        assert game["last_type"] == "deal_revealed", game
        assert game["winners"], game
    assert out["online"][-1]["choices"] > 0, out["online"]
    assert out["moves"] > 10
    # Both streams read as NDJSON (issue 44, item 8): the table's, in order, typed per line.
    log = out["tableLog"]
    assert log["ids"] == list(range(1, len(log["ids"]) + 1)), log
    assert log["events"][0] == "table_opened" and log["events"][-1] == "game_opened", log
    assert log["events"] == log["types"], log
