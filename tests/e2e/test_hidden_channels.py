"""An attacker's review of what the rules hide (docs/fairness.md, "Hidden values"): each test is
one channel, tried as a player at the table, a spectator, an anonymous caller or a solo player
would try it, and fails if the channel opens."""

from __future__ import annotations

import uuid

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
