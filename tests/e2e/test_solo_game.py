from __future__ import annotations

from tests.e2e.api_client import Api


async def test_a_solo_game_plays_to_the_end_over_http(ada: Api) -> None:
    table = await ada.solo_table(players=4)
    game = table["game"]
    assert [s["name"] for s in game["seats"]] == ["Ada", "Buzz", "Bumble", "Honey"]
    assert game["you"] == 1 and len(game["hand"]) == 10 and game["turn"] == 1
    final = await ada.play_to_the_end(game["game_id"])
    assert final["phase"] == "ended"
    assert final["result"]["winners"]
    assert final["turn"] == 10
