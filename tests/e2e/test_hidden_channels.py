"""An attacker's review of what the rules hide (docs/fairness.md, "Hidden values"): each test is
one channel, tried as a player at the table, a spectator, an anonymous caller or a solo player
would try it, and fails if the channel opens."""

from __future__ import annotations

import base64
import hashlib
import re
import uuid

import pytest

from tests.e2e.api_client import Api


async def test_a_replayed_create_gives_a_logged_out_token_nothing(ada: Api) -> None:
    """Idempotency replays: a stored answer (here createSoloTable's, with the player's hand) is
    the caller's only while the caller is someone. Once the token is revoked (logout), whoever
    holds it is an anonymous caller: a replay must not hand them the answer."""
    headers = {**ada.headers, "Idempotency-Key": str(uuid.uuid4())}
    first = await ada.client.post("/solo-tables", json={"players": 3}, headers=headers)
    assert first.status_code == 201, first.text
    assert first.json()["game"]["hand"]
    out = await ada.client.delete("/sessions/current", headers=ada.headers)
    assert out.status_code == 204, out.text
    again = await ada.client.post("/solo-tables", json={"players": 3}, headers=headers)
    assert again.status_code == 401, (again.status_code, again.text[:200])
    assert "hand" not in again.text
    # Nor whether the key was used: another body with it is the same 401, not a 409.
    other = await ada.client.post("/solo-tables", json={"players": 4}, headers=headers)
    assert (other.status_code, other.json()["code"]) == (401, "unauthorized")


@pytest.mark.parametrize("path", ["/", "/docs", "/docs/swagger"])
async def test_every_page_of_the_origin_runs_only_its_own_scripts(anon: Api, path: str) -> None:
    """Browser storage: the board keeps the bearer token (whose holder sees its hand) in
    `localStorage`, which every page of the origin may read. So every HTML page the service
    serves has a policy under which an injected script does not run (no `'unsafe-inline'`:
    inline scripts only by hash) and nothing is sent to another origin (`connect-src 'self'`,
    no remote source anywhere). tests/browser/test_origin_storage.py tries it in Chromium."""
    page = await anon.client.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = dict(
        (part.split()[0], part.split()[1:])
        for part in page.headers["content-security-policy"].split("; ")
    )
    assert policy["default-src"] == ["'none'"]
    assert policy["connect-src"] == ["'self'"]
    assert "'unsafe-inline'" not in policy["script-src"]
    assert "'unsafe-eval'" not in policy["script-src"]
    assert not [s for p in policy.values() for s in p if "://" in s or s in ("*", "https:")]
    for body in re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", page.text, re.S):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy["script-src"]
