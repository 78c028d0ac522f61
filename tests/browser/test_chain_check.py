"""The board re-computes the hash chain (docs/fairness.md, v2 and v1) in the browser, from the
game's export: against the document's vectors, on a finished game, and failing on a tampered
export."""

from __future__ import annotations

import json
from typing import Any

from tests.browser.board import play_to_end, start_solo, verdict
from tests.unit.test_chain import CHAIN_VECTORS, SEAL_KEY_VECTORS, V2_VECTORS


def test_the_browsers_chain_matches_the_documents_vectors(page: Any) -> None:
    [key] = SEAL_KEY_VECTORS
    got = page.evaluate(
        """async ([v1, v2, key]) => {
            const f = await import('/fairness.js');
            const dec = (hex) => new TextDecoder().decode(f.fromHex(hex));
            const k = await f.sealKey(key.game_id, f.fromHex(key.server_seed));
            const out = { v1: [], v2: [], key: f.toHex(k) };
            for (const v of v1) {
                const data = f.parseJson(dec(v.data_hex));
                out.v1.push(f.toHex(await f.eventHashV1(
                    f.fromHex(v.prev_hash), v.stream, Number(v.version), v.type, data)));
            }
            const sealKey = f.fromHex(out.key);
            for (const v of v2) {
                const row = { version: Number(v.version), type: v.type, recorded_at: v.recorded_at,
                              data: f.parseJson(dec(v.data_hex)),
                              metadata: f.parseJson(dec(v.metadata_hex)) };
                const prev = f.fromHex(v.prev_hash);
                out.v2.push(f.toHex(await f.eventHashV2(prev, v.stream, row, sealKey)));
            }
            return out;
        }""",
        [CHAIN_VECTORS, V2_VECTORS, key],
    )
    assert got["key"] == key["seal_key"]
    assert got["v1"] == [v["hash"] for v in CHAIN_VECTORS]
    assert got["v2"] == [v["hash"] for v in V2_VECTORS]


def test_a_finished_game_shows_its_chain_checked_and_a_tampered_export_fails(page: Any) -> None:
    tampered: list[str] = []

    def rewrite(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        if tampered == ["on"]:
            body["events"][3]["recorded_at"] = body["events"][4]["recorded_at"]
            tampered.append("done")
        route.fulfill(response=response, body=json.dumps(body))

    page.route("**/games/*/export", rewrite)
    start_solo(page, players=2)
    play_to_end(page)
    assert verdict(page) == "ok"
    line = page.locator(".verdict .chain-line")
    assert line.get_attribute("data-status") == "ok"
    assert "swarm/event/v2" in line.inner_text()

    tampered.append("on")
    page.reload()
    page.locator(".verdict .chain-line").wait_for(state="attached")
    assert tampered == ["on", "done"]
    line = page.locator(".verdict .chain-line")
    assert line.get_attribute("data-status") == "failed", line.text_content()
    assert "event v4" in (line.text_content() or "")
    assert verdict(page) == "failed"
