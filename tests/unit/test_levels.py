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
from service.domain.rules.levels import ALIASES, DEFAULT_LEVEL, LEVELS, level, levels_described
from service.domain.rules.simulate import shuffled_deck

ROOT = Path(__file__).resolve().parents[2]


def test_the_registry_is_the_stored_type_and_the_default_is_in_it() -> None:
    assert tuple(LEVELS) == BEE_LEVELS == ("easy", "medium", "hard", "expert")
    assert set(get_args(BeeLevel)) == set(LEVELS) | set(ALIASES)
    assert DEFAULT_LEVEL in LEVELS
    for name, entry in LEVELS.items():
        assert entry.name == name and entry.label and entry.description
        assert entry.rating.low <= entry.rating.points <= entry.rating.high
        assert "\n" not in entry.description and not entry.description.endswith(".")


def test_the_api_enum_and_description_come_from_the_registry() -> None:
    document = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    for body in ("SoloTableIn", "FillWithBeesIn"):
        field = document["components"]["schemas"][body]["properties"]["level"]
        # the generator sorts an enum's values; an older name is accepted too
        assert sorted(field["enum"]) == sorted(get_args(BeeLevel))
        assert field["default"] == DEFAULT_LEVEL
        assert levels_described() in field["description"]
        for name in get_args(BeeLevel):
            assert f"`{name}`" in field["description"]
        for lv in LEVELS.values():  # each with its rating and interval
            assert f"{lv.description} (rated {lv.rating.points:,} [" in field["description"]


def test_the_board_offers_the_registry() -> None:
    lines = LEVELS_MODULE.splitlines()
    assert f"export const DEFAULT_LEVEL = {json.dumps(DEFAULT_LEVEL)};" in lines
    (line,) = [x for x in lines if x.startswith("export const LEVELS = ")]
    offered = json.loads(line.removeprefix("export const LEVELS = ").removesuffix(";"))
    assert [o["name"] for o in offered] == list(LEVELS)
    assert [o["description"] for o in offered] == [lv.description for lv in LEVELS.values()]
    assert [(o["rating"], o["rating_interval"]) for o in offered] == [
        (lv.rating.points, [lv.rating.low, lv.rating.high]) for lv in LEVELS.values()
    ]
    assert 'from "./levels.js"' in (ROOT / "service" / "board" / "screens.js").read_text()
    (line,) = [x for x in lines if x.startswith("export const THINKING_LEVELS = ")]
    thinking = json.loads(line.removeprefix("export const THINKING_LEVELS = ").removesuffix(";"))
    assert sorted(thinking) == ["expert", "hard", "medium", "strong"]  # all but easy (heuristic)
    assert "THINKING_LEVELS" in (ROOT / "service" / "board" / "game.js").read_text()


def test_an_older_name_is_its_level_and_a_seat_without_one_plays_the_default() -> None:
    assert ALIASES == {"heuristic": "easy", "strong": "medium"}
    for old, new in ALIASES.items():
        assert level(old) is LEVELS[new]
    assert level(None) is LEVELS[DEFAULT_LEVEL] is LEVELS["easy"]


SEARCHING = ("medium", "strong", "expert")  # whole games of the levels that search: slow


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name in SEARCHING else name
        for name in get_args(BeeLevel)
    ],
)
def test_every_level_plays_a_legal_game(name: BeeLevel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expert, "WORK", 20_000)  # the same code on a small budget: seconds less
    monkeypatch.setattr(expert, "HARD_WORK", 20_000)
    rng = random.Random(29)
    seats = tuple(SeatInfo(seat=n, name=f"B{n}", kind="bee", level=name) for n in range(1, 5))
    state, _ = decide_and_evolve(
        StartGame(game_id="g", table_id="t", seats=seats, deck_order=shuffled_deck(4, rng)),
        initial_state,
    )
    assert needs_decision_seeds(state) == level(name).seeded
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
