"""The README's shell blocks, run as written against a live server: the walk-throughs can't rot.

Every ```sh block of README.md runs, in order, each alone in a fresh bash process (as a reader
pastes it into a new terminal: nothing carries over from the block before), unless the line
before it is `<!-- readme-test: skip (why) -->`. The only change made to them is the server's
address. They run in an empty temporary folder (no `.venv`: the audit uses the installed
`swarm`, on PATH as after `pip install`) and must leave no file there: their files go to
`mktemp -d`, which lands in the test's own temporary folder.

Lines `#> …` under a command show what it prints. Each must match a line the block really
printed (those inside an `if` or marked "(when too low)", only in a game where a bee of a person
was too low): JSON by its keys and the types of their values (a `null` stands for any value), other
text with numbers, hex and tokens as wildcards and `…` as "anything". What the output *means*
is checked separately per walk-through, on the fields the README relies on.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from service.api.app import create_app
from tests.deals import seeds_where
from tests.live_server import serve

README = Path(__file__).resolve().parents[2] / "README.md"
README_API = "API=http://127.0.0.1:${SWARM_PORT:-8000}"
SKIP = re.compile(r"^<!-- readme-test: skip \((.+)\) -->$")
SAMPLE = re.compile(r"^(\s*)#> ?(.*?)(\s+\(when too low\))?$")
SOLO = "A solo game with curl"
ONLINE = "An online game: two people with curl, and two bees"


@dataclass
class Block:
    heading: str
    code: str
    skip: str | None
    samples: list[str] = field(default_factory=list)  # `#>` lines: always printed
    # `#>` lines inside an `if` or marked "(when too low)": printed in a game where a person's
    # bee was too low (most games, not all: the deal is random)
    when_too_low: list[str] = field(default_factory=list)


def readme_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    heading, previous = "", ""
    lines = iter(text.splitlines())
    for line in lines:
        if line.startswith("## "):
            heading = line[3:].strip()
        if line.strip() in ("```sh", "```bash", "```shell"):
            body: list[str] = []
            for inner in lines:
                if inner.strip() == "```":
                    break
                body.append(inner)
            skip = SKIP.match(previous.strip())
            block = Block(heading, "\n".join(body), skip.group(1) if skip else None)
            for code_line in body:
                if sample := SAMPLE.match(code_line):
                    conditional = sample.group(1) or sample.group(3)
                    target = block.when_too_low if conditional else block.samples
                    target.append(sample.group(2))
            blocks.append(block)
        if line.strip():
            previous = line
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
RUN = [b for b in BLOCKS if b.skip is None]


def test_the_readme_has_its_walk_throughs_and_says_why_it_skips_the_others() -> None:
    assert [b.heading for b in RUN] == [SOLO, ONLINE]
    assert README_API in RUN[0].code, "the walk-through must talk to `make run`'s address"
    assert all(b.skip for b in BLOCKS if b.skip is not None)


def test_every_make_target_the_docs_name_exists() -> None:
    makefile = (README.parent / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", makefile, flags=re.M))
    docs = [README, *sorted((README.parent / "docs").glob("*.md"))]
    # `make x` in a code span, or a shell line that runs make (after any VAR=value)
    mention = re.compile(r"`make ([a-z][a-z0-9-]*)|^(?:\S+=\S+ )*make ([a-z][a-z0-9-]*)", re.M)
    named = {
        (doc.name, quoted or run)
        for doc in docs
        for quoted, run in mention.findall(doc.read_text(encoding="utf-8"))
    }
    assert {name for _, name in named} >= {"run", "test", "bench"}
    assert sorted((doc, t) for doc, t in named if t not in targets) == []


@dataclass
class Run:
    outputs: dict[str, list[str]]  # heading → the lines its block printed
    leftovers: list[str]  # files the blocks left in the folder they ran in
    stderr: str


@pytest.fixture(scope="module")
def readme_run(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    # Seat 1 is dealt bee 1, so the solo walk-through's first bee is too low and every line of
    # it runs (its `if` included). The online game's deal takes Bob's seed: whatever it is.
    seeds = seeds_where(4, lambda hands, stems: 1 in hands[0])
    app = create_app(database_url, rate_limit_per_second=0, server_seeds=seeds)
    server = serve(app)
    base = next(server)
    try:
        folder = tmp_path_factory.mktemp("readme-cwd")
        tmp = tmp_path_factory.mktemp("readme-tmp")
        env = {
            **os.environ,
            "TMPDIR": str(tmp),
            # This interpreter first, so `python3` is quick to start (no version-manager shims),
            # and this tree's `service`, whatever the environment has installed.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(README.parent),
        }
        outputs: dict[str, list[str]] = {}
        errors: list[str] = []
        for block in RUN:
            code = block.code.replace(README_API, f"API={base}")
            done = subprocess.run(
                ["bash", "-c", f"set -euo pipefail\n{code}"],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=240,
            )
            assert done.returncode == 0, (
                f"block {block.heading!r} failed alone (exit {done.returncode}):\n"
                + done.stdout
                + f"\n--- stderr ---\n{done.stderr}"
            )
            outputs[block.heading] = done.stdout.splitlines()
            errors.append(done.stderr)
        leftovers = sorted(p.name for p in folder.iterdir())
        yield Run(outputs, leftovers, "".join(errors))
    finally:
        next(server, None)  # stops the server


# --- matching `#>` samples -----------------------------------------------------------------


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _shape(v) for key, v in value.items()}
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def _same_shape(sample: Any, actual: Any) -> bool:
    if sample is None:
        return True
    if isinstance(sample, dict):
        return (
            isinstance(actual, dict)
            and list(sample) == list(actual)
            and all(_same_shape(sample[k], actual[k]) for k in sample)
        )
    return bool(_shape(sample) == _shape(actual))


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return ...


WILD = re.compile(r"[A-Za-z0-9_-]{20,}|[0-9a-f]{8,}|\d+|…")


def _pattern(sample: str) -> re.Pattern[str]:
    out, at = [], 0
    for match in WILD.finditer(sample):
        out.append(re.escape(sample[at : match.start()]))
        token = match.group()
        out.append(
            ".*"
            if token == "…"
            else r"\d+"
            if token.isdigit()
            else "[0-9a-f]+"
            if re.fullmatch("[0-9a-f]+", token)
            else "[A-Za-z0-9_-]+"
        )
        at = match.end()
    out.append(re.escape(sample[at:]))
    return re.compile("".join(out))


def matches(sample: str, line: str) -> bool:
    """Whether an output line is what a `#>` sample shows (see the module's docstring)."""
    sample_parts, line_parts = sample.split(" → "), line.strip().split(" → ")
    if len(sample_parts) != len(line_parts):
        return False
    for s, a in zip(sample_parts, line_parts, strict=True):
        expected, actual = _json(s), _json(a)
        if expected is not ...:
            if actual is ... or not _same_shape(expected, actual):
                return False
        elif not _pattern(s).fullmatch(a):
            return False
    return True


def test_the_sample_matcher_is_neither_blind_nor_picky() -> None:
    assert matches('{"phase": "picking", "turn": 1}', '{"phase": "ended", "turn": 10}')
    assert not matches('{"phase": "picking", "turn": 1}', '{"phase": "picking"}')
    assert not matches('{"phase": "picking", "turn": 1}', '{"turn": 1, "phase": "picking"}')
    assert matches('{"bee": 1, "stem": null}', '{"bee": 4, "stem": 2}')
    assert not matches('{"hand": [1, 2]}', '{"hand": null}')
    assert matches("✓ replay      43 moves re-decided", "✓ replay      41 moves re-decided")
    game = "Game 2f74aece-023d-404c-8a28-e9f9a34aa3a8"
    other = "Game 1d9d9f3d-c7d3-4e87-ac76-ae095b0a2da4"
    assert matches(f"{game}: every check passed.", f"{other}: every check passed.")
    assert not matches(f"{game}: every check passed.", f"{game}: 1 check failed.")
    assert matches("✓ commitment  to e79323d06dd12336…", "✓ commitment  to ab12cd34ef…")
    assert matches("yjk0RkZhg_htBi2VwoGAaoeIRNWprGUZI43Ap6Muit0", "Q2-x_" + "k" * 38)
    assert matches("stings [0, 9, 21, 14], won by …", "stings [9, 26, 5, 5], won by seat 3, seat 4")
    assert not matches("stings [0, 9, 21, 14], won by …", "stings [9, 26, 5], won by seat 3")


def _unmatched(samples: list[str], output: list[str]) -> list[str]:
    return [s for s in samples if not any(matches(s, line) for line in output)]


@pytest.mark.parametrize("block", RUN, ids=[b.heading for b in RUN])
def test_every_sample_line_is_what_the_block_prints(readme_run: Run, block: Block) -> None:
    output = readme_run.outputs[block.heading]
    assert block.samples, "a walk-through shows what its commands print"
    too_low = any('"phase": "choosing"' in line for line in output)
    samples = block.samples + (block.when_too_low if too_low else [])
    assert _unmatched(samples, output) == [], "\n".join(output)


def test_the_walk_throughs_write_nothing_where_they_run(readme_run: Run) -> None:
    assert readme_run.leftovers == []


def test_a_failed_step_shows_the_problem_not_a_traceback() -> None:
    """The helpers print an error answer as `status code: detail` and fail (issue 27: a 429 on
    createGuest used to surface as `KeyError: 'token'`)."""
    for block in RUN:
        helpers = block.code[block.code.index("field() {") : block.code.index("show() {")]
        helpers += block.code[block.code.index("show() {") :].split("\n", 1)[0]
        problem = json.dumps(
            {
                "type": "urn:swarm:problem:too-many-sign-ups",
                "title": "Too many new players from this address",
                "status": 429,
                "detail": "Try again in 3600 seconds.",
                "code": "too-many-sign-ups",
            }
        )
        for use in ("field token", "show phase"):
            done = subprocess.run(
                ["bash", "-c", f"{helpers}\n{use}"],
                input=problem,
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert done.returncode != 0 and done.stdout == "", (block.heading, use, done)
            assert done.stderr.strip() == "429 too-many-sign-ups: Try again in 3600 seconds."


# --- what the output means -----------------------------------------------------------------


def _objects(output: list[str]) -> list[dict[str, Any]]:
    return [v for line in output if isinstance(v := _json(line), dict)]


def _moves(output: list[str]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [
        (json.loads(sent), json.loads(answer))
        for line in output
        if " → " in line
        for sent, answer in [line.split(" → ")]
    ]


def _check_play(moves: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """A run of moves played to the end: a take_stem follows each `choosing`, and the last
    answer is the ended game after turn 10."""
    assert moves, "the game was played"
    for (sent, answer), following in zip(moves, [*moves[1:], None], strict=True):
        assert sent["type"] in ("confirm", "take_stem")
        assert answer["phase"] in ("picking", "choosing", "ended")
        if answer["phase"] == "choosing" and following is not None:
            # The chooser moves next: nobody else has a move while a stem is being chosen.
            assert following[0]["type"] == "take_stem" and 1 <= following[0]["stem"] <= 4
    assert {k: moves[-1][1][k] for k in ("phase", "turn")} == {"phase": "ended", "turn": 10}


def test_the_solo_walk_through_plays_a_whole_game(readme_run: Run) -> None:
    output = readme_run.outputs[SOLO]
    token = output[0]
    assert re.fullmatch(r"[A-Za-z0-9_-]{20,}", token)
    objects = _objects(output)
    dealt = objects[0]
    assert dealt["phase"] == "picking" and dealt["turn"] == 1
    hand = dealt["hand"]
    assert len(hand) == 10 and hand == sorted(hand) and set(hand) <= set(range(1, 45))
    lowest = objects[1]
    assert lowest["bee"] == hand[0] and isinstance(lowest["too_low"], bool)
    assert objects[2] == {"phase": "picking", "tapped": hand[0]}
    # The deal gave seat 1 bee 1 (see `readme_run`): too low, the lowest of all, so ours to place.
    assert hand[0] == 1 and lowest["too_low"] is True
    assert objects[3] == {"phase": "choosing", "turn": 1}
    choice, taken = objects[4], objects[5]
    assert choice["seat"] == 1 and choice["bee"] == 1 and choice["yours"] is True
    assert 1 <= choice["cheapest"] <= 4
    assert taken == {"phase": "picking", "turn": 2}
    moves = _moves(output)
    _check_play(moves)
    confirms = [sent for sent, _ in moves if sent["type"] == "confirm"]
    assert [c["bee"] for c in confirms] == hand[1:], "the lowest bee, turn after turn"
    result = next(o for o in objects if "winners" in o)
    assert result["reason"] == "finished" and set(result["winners"]) <= {1, 2, 3, 4}
    assert result["winners"]
    log = output[-5:]
    assert log[:3] == ["1 deal_committed", "2 game_started", "3 turn_started"]


def test_the_online_walk_through_plays_audits_and_plays_again(readme_run: Run) -> None:
    output = readme_run.outputs[ONLINE]
    objects = _objects(output)
    committed, listed, joined, dealt = objects[:4]
    assert re.fullmatch("[0-9a-f]{64}", committed["commitment"])
    assert listed["host_name"] == "Hana" and listed["seats_taken"] == 1
    assert listed["capacity"] == 4
    assert joined == {"status": "open", "you": 2}
    assert dealt["phase"] == "picking" and dealt["turn"] == 1 and len(dealt["hand"]) == 10
    moves = _moves(output)
    _check_play(moves)
    confirms = sorted((sent["move_id"], answer["you"]) for sent, answer in moves if "bee" in sent)
    assert confirms == sorted((f"turn{t}-picking", seat) for t in range(1, 11) for seat in (1, 2))
    takes = [answer["you"] for sent, answer in moves if sent["type"] == "take_stem"]
    assert set(takes) <= {1, 2}, "only people choose; the bees take the cheapest stem by rule"
    result = next(o for o in objects if "winners" in o)
    assert result["reason"] == "finished" and set(result["winners"]) <= {1, 2, 3, 4}
    audit = next(line for line in output if line.startswith("Game "))
    assert audit == f"Game {committed['game_id']}: every check passed."
    assert f"commitment:  {committed['commitment']}" in output, "held to the commitment kept"
    assert not any(line.startswith("✗") for line in output)
    assert objects[-1] == {"phase": "picking", "turn": 1}, "play again deals a new game"


def test_the_walk_throughs_work_in_a_fresh_terminal() -> None:
    """Issue 44, item 12: pasted into a fresh terminal in this folder after `make run`, the
    walk-throughs call no bare `swarm` (only `.venv/bin/swarm` exists then) and talk to the
    port `make run` serves on, SWARM_PORT included."""
    walks = [b for b in readme_blocks(README.read_text()) if not b.skip]
    commands = [
        line for b in walks for line in b.code.splitlines() if not line.lstrip().startswith("#")
    ]
    assert not [line for line in commands if re.match(r"\s*swarm\s", line)]
    apis = [line for line in commands if line.startswith("API=")]
    assert apis and all(line.startswith(README_API) for line in apis)
    (finder,) = {line for line in commands if line.startswith("SWARM=")}
    # Without an installed `swarm` on PATH, the block finds the one `make run` made.
    found = subprocess.run(
        ["bash", "-c", finder.split("#")[0] + '; echo "$SWARM"'],
        cwd=README.parent,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert found == ".venv/bin/swarm"  # where `make run`'s venv puts it (VENV in Makefile)
    ported = subprocess.run(
        ["bash", "-c", apis[0].split("#")[0] + '; echo "$API"'],
        env={"PATH": "/usr/bin:/bin", "SWARM_PORT": "8123"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert ported == "http://127.0.0.1:8123"
