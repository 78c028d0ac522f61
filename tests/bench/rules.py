"""The rules' two comparisons of ``make bench`` alone: ``python -m tests.bench.rules [--quick]``.

Engine ÷ plain loop (4 and 8 players, random play and bees on every seat) and cold rebuild ÷
bare SELECT, measured by the same functions and settings as ``tests/bench/bench.py`` (against a
fresh ``swarm_bench_<random>`` database, dropped afterwards), without starting the servers: a
minute instead of four, for work on the engine or the fold. Prints the figures (median and
min–max over the rounds).

Before and after a change, in one run (the machine is shared, so only figures measured side by
side compare): check the other commit out outside the repository
(``git worktree add /tmp/engine-before <commit>``) and pass it with ``--against``:

- ``--against DIR`` runs both checkouts' own ``python -m tests.bench.rules`` alternately,
  ``--pairs`` times (DIR first, then this one);
- ``--cpu`` measures CPU time instead (``time.process_time``: what the process itself spent,
  much steadier than wall-clock on a loaded machine): µs a game through
  ``engine.decide_and_evolve`` (random play, bees on every seat, and the recorded commands of bee
  games, which leaves the bee policy out), and µs to ``fold`` or ``evolve`` a stored game, best
  of ``--repeats`` slices. No database. With ``--against``, the same measurement (this file's)
  runs on each checkout's code, in separate processes, alternately, and the table gives the
  median over the pairs and this ÷ DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

# A --cpu run on another checkout's code imports that checkout's modules (PYTHONPATH), so the
# imports that need a database are made where they are used.
from tests.bench import bench

ROOT = Path(__file__).resolve().parents[2]

# (figure, players, what is measured, games a slice)
CPU_FIGURES: tuple[tuple[str, int, str, int], ...] = (
    ("random play, 4 players", 4, "random", 300),
    ("random play, 8 players", 8, "random", 150),
    ("bees on every seat, 4 players", 4, "bees", 40),
    ("bees on every seat, 8 players", 8, "bees", 20),
    ("bee games' commands, 4 players", 4, "commands", 100),
    ("bee games' commands, 8 players", 8, "commands", 50),
    ("fold a stored bee game, 4 players", 4, "fold", 100),
    ("fold a stored bee game, 8 players", 8, "fold", 50),
    ("evolve a stored bee game, 4 players", 4, "evolve", 100),
    ("evolve a stored bee game, 8 players", 8, "evolve", 50),
)


def _bee_games(players: int, count: int) -> tuple[list[list[Any]], list[list[Any]]]:
    """The commands and the events of `count` bee games (the same deals every run)."""
    from service.domain.rules import engine
    from service.domain.rules.bees import bee_commands
    from service.domain.rules.commands import StartGame
    from service.domain.rules.simulate import bee_seats, shuffled_deck

    rng = random.Random(3)
    games, logs = [], []
    for _ in range(count):
        start = StartGame(
            game_id="sim",
            table_id="sim",
            seats=bee_seats(players),
            deck_order=shuffled_deck(players, rng),
        )
        commands: list[Any] = [start]
        state, events = engine.decide_and_evolve(start, engine.initial_state)
        log: list[Any] = list(events)
        while state.phase != "ended":
            for command in bee_commands(state):
                commands.append(command)
                state, events = engine.decide_and_evolve(command, state)
                log += events
        games.append(commands)
        logs.append(log)
    return games, logs


def cpu_figures(repeats: int) -> dict[str, float]:
    """µs of CPU time a game for each of `CPU_FIGURES`, the best of `repeats` slices."""
    from service.domain.rules import engine

    figures: dict[str, float] = {}
    for name, players, kind, games in CPU_FIGURES:
        play: Callable[[], object]
        if kind in ("random", "bees"):

            def play(
                players: int = players, games: int = games, bees: bool = kind == "bees"
            ) -> None:
                rng = random.Random(1)
                for _ in range(games):
                    bench.engine_game(players, bees, rng)

        else:
            commands, logs = _bee_games(players, games)
            if kind == "commands":

                def play(commands: list[list[Any]] = commands) -> None:
                    for game in commands:
                        state = engine.initial_state
                        for command in game:
                            state, _ = engine.decide_and_evolve(command, state)

            elif kind == "fold":

                def play(logs: list[list[Any]] = logs) -> None:
                    for log in logs:
                        engine.fold(log)

            else:

                def play(logs: list[list[Any]] = logs) -> None:
                    for log in logs:
                        state = engine.initial_state
                        for event in log:
                            state = engine.evolve(state, event)

        play()  # warm
        best = float("inf")
        for _ in range(repeats):
            start = time.process_time()
            play()
            best = min(best, time.process_time() - start)
        figures[name] = best / games * 1e6
    return figures


def _cpu_in(tree: Path, repeats: int) -> dict[str, float]:
    """`cpu_figures`, this file's, run on the code of the checkout `tree` in a process of its own
    (its directory first on the path): the same measurement on both sides."""
    code = (
        "import json, runpy\n"
        f"rules = runpy.run_path({str(Path(__file__))!r})\n"
        f"print(json.dumps(rules['cpu_figures']({repeats})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def compare_cpu(against: Path, pairs: int, repeats: int) -> None:
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for pair in range(pairs):
        order = [("before", against), ("after", ROOT)]
        for side, tree in order if pair % 2 == 0 else order[::-1]:
            runs[side].append(_cpu_in(tree, repeats))
            print(f"pair {pair + 1}/{pairs}: {side} measured", file=sys.stderr)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"CPU µs a game (best of {repeats} slices; median over {pairs} pairs, min–max)")
    print(f"before: {against}   after: {ROOT}   load average now {load}")
    print(f"{'figure':<38}{'before':>24}{'after':>24}{'after ÷ before':>16}")
    for name, *_ in CPU_FIGURES:
        cells = []
        medians = []
        for side in ("before", "after"):
            values = [run[name] for run in runs[side]]
            medians.append(statistics.median(values))
            cells.append(f"{medians[-1]:.1f} ({min(values):.1f}–{max(values):.1f})")
        print(f"{name:<38}{cells[0]:>24}{cells[1]:>24}{medians[1] / medians[0]:>16.3f}")


def _rebuild(url: str, settings: bench.Settings) -> dict[str, Any]:
    from service.store.events import EventStore
    from service.store.pool import open_pool

    async def run() -> dict[str, Any]:
        pool = await open_pool(url, min_size=1, max_size=4)
        try:
            return await bench.bench_rebuild(pool, EventStore(pool), settings)
        finally:
            await pool.close()

    return asyncio.run(run())


def figures(quick: bool) -> None:
    """The engine ÷ plain loop and cold rebuild ÷ bare SELECT figures, printed."""
    from service.store.database import drop_database, ensure_database, provide_database_url
    from service.store.migrate import migrate

    settings = bench.QUICK if quick else bench.FULL
    server_url = provide_database_url(os.environ.get("DATABASE_URL"))
    name = f"swarm_bench_{uuid.uuid4().hex[:12]}"
    url = ensure_database(server_url, name)
    try:
        migrate(url)
        results: dict[str, Any] = {"engine": bench.bench_engine(settings)}
        results["rebuild"] = _rebuild(url, settings)
    finally:
        drop_database(server_url, name)
    for e in results["engine"]:
        print(
            f"engine ÷ plain loop, {e['players']} players, {e['play']:<6} "
            f"{bench._fmt(e['ratio'], 3)}   engine {e['engine_games_per_s']['median']:.0f}/s, "
            f"plain {e['plain_games_per_s']['median']:.0f}/s"
        )
    rb = results["rebuild"]
    print(
        f"cold rebuild ÷ bare SELECT            {bench._fmt(rb['ratio'], 3)}   "
        f"rebuild {rb['rebuild_games_per_s']['median']:.0f}/s, "
        f"SELECT {rb['select_per_s']['median']:.0f}/s"
    )


def compare_figures(against: Path, pairs: int, quick: bool) -> None:
    """Each checkout's own ``python -m tests.bench.rules``, alternately."""
    for pair in range(pairs):
        order = [("before", against), ("after", ROOT)]
        for side, tree in order if pair % 2 == 0 else order[::-1]:
            stamp = time.strftime("%H:%M:%S")
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"--- pair {pair + 1}, {side} ({tree}), {stamp}, load average {load}", flush=True)
            command = [sys.executable, "-m", "tests.bench.rules", *(["--quick"] if quick else [])]
            subprocess.run(
                command, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="2 rounds of short slices")
    parser.add_argument("--cpu", action="store_true", help="CPU time a game instead; no database")
    parser.add_argument("--against", type=Path, help="a checkout of the commit to compare with")
    parser.add_argument("--pairs", type=int, default=3, help="before/after pairs (--against)")
    parser.add_argument("--repeats", type=int, default=5, help="slices a figure (--cpu)")
    args = parser.parse_args(argv)
    if args.against is not None:
        against = args.against.resolve()
        if args.cpu:
            compare_cpu(against, args.pairs, args.repeats)
        else:
            compare_figures(against, args.pairs, args.quick)
    elif args.cpu:
        for name, value in cpu_figures(args.repeats).items():
            print(f"{name:<38}{value:10.1f} µs")
    else:
        figures(args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
