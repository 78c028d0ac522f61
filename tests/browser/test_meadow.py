"""The ⏱ Meadow log: every event as it happens, and the deal checked in the browser itself
(WebCrypto, docs/fairness.md) against what the page recorded when it was first shown."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.board import open_meadow, play_to_end, play_turn, start_solo, verdict
from tests.unit.test_fairness import SHUFFLE_VECTORS, VECTORS


def test_the_browsers_derivation_matches_the_documents_test_vectors(page: Any) -> None:
    results = page.evaluate(
        """async ([vectors, shuffles]) => {
            const f = await import('/fairness.js');
            const out = [];
            for (const v of vectors) {
                const players = Number(v.players);
                const seed = f.fromHex(v.server_seed);
                const seeds = [];
                for (let s = 1; s <= players; s++) {
                    const t = v[`client_seed.${s}`];
                    seeds.push(t === 'none' ? null
                        : t === 'empty' ? new Uint8Array() : f.fromHex(t));
                }
                const commit = await f.commitment(v.game_id, seed);
                const transcript = await f.transcriptHash(v.game_id, players, commit, seeds);
                const order = await f.deckOrder(seed, transcript, players);
                const { hands, stems } = f.deal(order, players);
                out.push({
                    commitment: f.toHex(commit),
                    transcript: f.toHex(transcript),
                    block0: f.toHex(await f.streamBlock(seed, transcript, 0)),
                    deck_order: order.join(' '),
                    stems: stems.join(' '),
                    hand1: hands[0].join(' '),
                    fingerprint: f.toHex(await f.fingerprint(transcript, seed, hands, stems)),
                });
            }
            for (const s of shuffles) {
                const words = s.shuffle_words.split(' ').map(Number);
                let i = 0;
                const order = await f.shuffleWords(Number(s.shuffle_n), async () => words[i++]);
                out.push({ shuffle_order: order.join(' ') });
            }
            return out;
        }""",
        [VECTORS, SHUFFLE_VECTORS],
    )
    for v, got in zip(VECTORS, results, strict=False):
        for key in ("commitment", "transcript", "block0", "deck_order", "stems", "fingerprint"):
            assert got[key] == v[key], (v["vector"], key)
        assert got["hand1"] == v["hand.1"]
    assert results[-1]["shuffle_order"] == SHUFFLE_VECTORS[0]["shuffle_order"]


def test_the_log_shows_every_event_redacted_and_the_honest_deal_checks_out(page: Any) -> None:
    start_solo(page, players=2)
    play_turn(page)
    open_meadow(page)
    log = page.locator("#meadow-panel .log .ev")
    types = log.evaluate_all("items => items.map(i => i.dataset.type)")
    # Oldest first: the log reads in the order the game was played (issue 25, item 12).
    assert types[0] == "deal_committed" and "game_started" in types and "picks_revealed" in types
    versions = log.evaluate_all("items => items.map(i => Number(i.dataset.version))")
    assert versions == sorted(versions)
    # While the game runs, Buzz's hand is hidden in the log as the API hides it.
    started = json.loads(page.locator('.ev[data-type="game_started"] pre').text_content())
    assert started["hands"][0] is not None and started["hands"][1] is None
    assert page.locator(".verdict").get_attribute("data-status") == "pending"
    # The fingerprint the board stored before turn 1 is shown at once, not "not yet" (item 6).
    fingerprint = page.evaluate(
        "id => JSON.parse(localStorage.getItem(`swarm.meadow.${id}`)).fingerprint",
        page.url.split("#/game/")[1],
    )
    recorded = page.locator(".verdict .recorded dd").all_inner_texts()
    assert fingerprint and fingerprint in recorded and "not yet" not in recorded

    play_to_end(page)
    assert verdict(page) == "ok"
    steps = page.locator(".verdict .step")
    assert steps.evaluate_all("s => s.map(x => [x.dataset.step, x.dataset.status])") == [
        [name, "ok"] for name in ("commitment", "transcript", "deck", "deal", "fingerprint")
    ]
    assert "Fair deal: checked in your browser" in page.locator(".verdict-title").inner_text()
    assert "✔ Fair deal" in page.locator(".result .verdict-line").inner_text()
    types = log.evaluate_all("items => items.map(i => i.dataset.type)")
    assert types[-2:] == ["game_ended", "deal_revealed"]
    # Back to setup from the result.
    page.get_by_role("button", name="Close the Meadow log").click()
    page.get_by_role("button", name="Back to setup").click()
    page.get_by_role("button", name="Into the meadow").wait_for()


def _flip(hex_text: str) -> str:
    return ("1" if hex_text[0] != "1" else "2") + hex_text[1:]


def _tamper_seed(events: list[dict[str, Any]]) -> None:
    for event in events:
        if event["type"] == "deal_revealed":
            event["data"]["server_seed"] = _flip(event["data"]["server_seed"])


def _tamper_hands(events: list[dict[str, Any]]) -> None:
    for event in events:
        if event["type"] == "game_started":
            hands = event["data"]["hands"]
            hands[0][0], hands[1][0] = hands[1][0], hands[0][0]


def _tamper_fingerprint(events: list[dict[str, Any]]) -> None:
    for event in events:
        if event["type"] == "game_started":
            proof = event["data"]["proof"]
            proof["fingerprint"] = _flip(proof["fingerprint"])


@pytest.mark.parametrize(
    ("tamper", "failed_step"),
    [(_tamper_seed, "commitment"), (_tamper_hands, "deal"), (_tamper_fingerprint, "fingerprint")],
    ids=["server-seed", "hands", "fingerprint"],
)
def test_the_verdict_fails_when_what_the_page_received_was_tampered_with(
    page: Any, tamper: Any, failed_step: str
) -> None:
    """A man in the middle (or a lying server) rewrites the published deal after the end: the
    browser's own check names the step that no longer agrees with what it recorded."""
    tampered: list[int] = []

    def rewrite(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        if any(e["type"] == "deal_revealed" for e in body["events"]):
            tamper(body["events"])
            tampered.append(len(body["events"]))
        route.fulfill(response=response, json=body)

    page.route("**/games/*/events?*", rewrite)
    start_solo(page, players=2)
    play_to_end(page)
    assert verdict(page) == "failed"
    assert tampered, "the test never rewrote a response"
    failed = page.locator('.verdict .step[data-status="failed"]')
    assert failed.count() == 1 and failed.get_attribute("data-step") == failed_step
    later = page.locator('.verdict .step[data-status="skipped"]').count()
    order = ["commitment", "transcript", "deck", "deal", "fingerprint"]
    assert later == len(order) - order.index(failed_step) - 1
    assert "does not check out" in page.locator(".verdict-title").inner_text()
    assert "✘" in page.locator(".result .verdict-line").inner_text()
