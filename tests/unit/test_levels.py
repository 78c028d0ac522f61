"""The bee levels' registry (`service/domain/rules/levels.py`) is the one list of levels: the
stored events' type, the API's enum and description, and the board's choice all agree with it,
and every level plays legal whole games from what its seat may see."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import get_args

import pytest

from service.api.board import LEVELS_MODULE
from service.domain.rules import expert
from service.domain.rules.bees import BEE_LEVELS, bee_commands, decision_seeds, needs_decision_seeds
from service.domain.rules.commands import StartGame
from service.domain.rules.engine import decide_and_evolve, initial_state
from service.domain.rules.events import BeeLevel, SeatInfo
from service.domain.rules.levels import DEFAULT_LEVEL, LEVELS, levels_described
from service.domain.rules.simulate import shuffled_deck

ROOT = Path(__file__).resolve().parents[2]


def test_the_registry_is_the_stored_type_and_the_default_is_in_it() -> None:
    assert tuple(LEVELS) == get_args(BeeLevel) == BEE_LEVELS
    assert DEFAULT_LEVEL in LEVELS
    for name, level in LEVELS.items():
        assert level.name == name and level.label and level.description
        assert "\n" not in level.description and not level.description.endswith(".")


def test_the_api_enum_and_description_come_from_the_registry() -> None:
    document = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    for body in ("SoloTableIn", "FillWithBeesIn"):
        level = document["components"]["schemas"][body]["properties"]["level"]
        assert sorted(level["enum"]) == sorted(LEVELS)  # the generator sorts an enum's values
        assert level["default"] == DEFAULT_LEVEL
        assert levels_described() in level["description"]
        for name in LEVELS:
            assert f"`{name}`" in level["description"]


def test_the_board_offers_the_registry() -> None:
    lines = LEVELS_MODULE.splitlines()
    assert f"export const DEFAULT_LEVEL = {json.dumps(DEFAULT_LEVEL)};" in lines
    offered = json.loads(lines[-1].removeprefix("export const LEVELS = ").removesuffix(";"))
    assert [o["name"] for o in offered] == list(LEVELS)
    assert [o["description"] for o in offered] == [lv.description for lv in LEVELS.values()]
    assert 'from "./levels.js"' in (ROOT / "service" / "board" / "screens.js").read_text()


@pytest.mark.parametrize("name", list(LEVELS))
def test_every_level_plays_a_legal_game(name: BeeLevel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expert, "WORK", 4_000)  # the same code on a small budget: seconds less
    rng = random.Random(29)
    seats = tuple(SeatInfo(seat=n, name=f"B{n}", kind="bee", level=name) for n in range(1, 5))
    state, _ = decide_and_evolve(
        StartGame(game_id="g", table_id="t", seats=seats, deck_order=shuffled_deck(4, rng)),
        initial_state,
    )
    assert needs_decision_seeds(state) == LEVELS[name].seeded
    seed_for = decision_seeds(b"s" * 32, "g")
    while state.phase != "ended":
        picks = bee_commands(state, seed_for=seed_for)
        assert picks, "a bee picks whenever a turn waits for it"
        for pick in picks:
            assert pick.bee in state.seat(pick.seat).hand
            state, _ = decide_and_evolve(pick, state)  # refuses an illegal pick
    assert all(not s.hand for s in state.seats) and state.turn == 10


def test_the_readme_lists_every_level() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## The bee players") :]
    section = section.split("\n## ", 1)[0]  # to the next section, if any
    listed = [line.split("`")[1] for line in section.splitlines() if line.startswith("- **`")]
    assert listed == list(LEVELS)
    assert "service/domain/rules/levels.py" in section
