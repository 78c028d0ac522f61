"""Each bee level's strength as a rating, by the service's own rating system (issue 45).

    python -m tests.bench.level_ratings                  # play the games, fit, print the table
    python -m tests.bench.level_ratings --games 40,10    # fewer games (4 seats, 8 seats)
    python -m tests.bench.level_ratings --refit FILE     # fit again from a run's --json

The levels (easy, medium, hard, expert) and MCS(100), the anchor of `tests/bench/bees.py`, play
each other in whole games through the engine: at 4 seats each game seats four of them, the
line-ups turning so every four meet equally often; at 8 seats every one of them plays, three
of them twice. The seat order and the deal come from the game's number (`deal/{players}/{n}`,
the deals of `make bench-bees`), every seeded level gets the service's decision seed, and a
service level sits as a bee of that level (so the expert knows an easy bee when it meets one)
while MCS(100) sits as a person, as in `bees.py`.

The ratings are fitted with the rating system the service uses for people
(`service.domain.ratings`: openskill's Weng-Lin Plackett-Luce, the same model, starting values
and `points` = mu x 60): game after game, each seat of the field carries its level's rating
then and its place by stings (seats with as many stings share a place); a level that played two
seats takes the mean of their two updated ratings. No person plays in these games, so the
ratings rank the levels among themselves (and MCS(100)); a new person's 1,500 is only the same
starting point. A person's rating follows their latest games; a level's strength does not
change, so its rating is the mean over `ORDERS` shuffled orders of the same games. The
interval is a 95% percentile bootstrap over the games (the games resampled with replacement and
rated again, averaged over `BOOTSTRAP_ORDERS` shuffled orders, `RESAMPLES` times): how much the
figure depends on which games were played. The per-game results are kept (`--json`), so
refitting costs no game.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from service.domain.ratings import NEW, POINTS_PER_MU, Placing, Rating, rate
from service.domain.rules.bees import BEE_NAMES
from service.domain.rules.engine import cheapest_stem
from service.domain.rules.events import SeatInfo
from service.domain.rules.levels import LEVELS
from service.domain.rules.simulate import Policy, play_game
from tests.bench import bees

POOL: tuple[str, ...] = (*LEVELS, "mcs")
GAMES = (100, 30)  # at 4 seats, at 8 seats
RESAMPLES = 200
ORDERS = 100
BOOTSTRAP_ORDERS = 10  # the orders averaged in each resample


def lineup(players: int, number: int, pool: tuple[str, ...] = POOL) -> list[str]:
    """Who sits where in game `number`: at most `players` levels, each once, turning through
    the pool's combinations; more seats than levels seat the first levels of a turned pool
    again. The seat order is shuffled from the game's number."""
    if players <= len(pool):
        combos = list(itertools.combinations(pool, players))
        seats = list(combos[number % len(combos)])
    else:
        turned = pool[number % len(pool) :] + pool[: number % len(pool)]
        seats = list(pool) + list(turned[: players - len(pool)])
    random.Random(f"ratings/{players}/{number}").shuffle(seats)
    return seats


def play(players: int, number: int) -> dict[str, Any]:
    """Game `number` at `players` seats: its line-up, each seat's stings and CPU ms."""
    who = lineup(players, number)
    game_id = f"ratings-{players}-{number}"
    timed = [bees.Timed(level, game_id) for level in who]
    policies: list[Policy] = list(timed)
    seats = tuple(
        SeatInfo(seat=n, name=BEE_NAMES[(n - 1) % len(BEE_NAMES)], kind="bee", level=w)
        if w in LEVELS
        else SeatInfo(seat=n, name=f"Player {n}", kind="person", player_id=f"bench-{n}")
        for n, w in enumerate(who, start=1)
    )
    state, _ = play_game(
        seats,
        policies,
        random.Random(f"deal/{players}/{number}"),
        lambda state, seat: cheapest_stem(state.stems),
    )
    return {
        "players": players,
        "number": number,
        "levels": who,
        "stings": [s.stings for s in state.seats],
        "cpu_ms": [t.cpu_ms for t in timed],
    }


def _play_star(args: tuple[int, int]) -> dict[str, Any]:
    return play(*args)


def places(stings: list[int]) -> list[int]:
    """Each seat's place by stings, 1 the fewest; seats with as many share a place."""
    distinct = sorted(set(stings))
    return [distinct.index(s) + 1 for s in stings]


def fit(games: list[dict[str, Any]]) -> dict[str, Rating]:
    """Every level's rating after `games`, rated one after another as the service rates
    people; a level that played several seats of a game takes the mean of their updates."""
    ratings = {level: NEW for game in games for level in game["levels"]}
    for game in games:
        field = [
            Placing(player_id=f"{seat}:{level}", place=place, rating=ratings[level])
            for seat, (level, place) in enumerate(
                zip(game["levels"], places(game["stings"]), strict=True)
            )
        ]
        after = rate(field)
        for level in set(game["levels"]):
            mine = [r for key, r in after.items() if key.split(":", 1)[1] == level]
            ratings[level] = Rating(
                mu=statistics.fmean(r.mu for r in mine),
                sigma=statistics.fmean(r.sigma for r in mine),
                games=ratings[level].games + 1,
            )
    return ratings


def bootstrap(games: list[dict[str, Any]], seed: int = 45) -> dict[str, tuple[int, int]]:
    """Each level's 95% percentile interval of points over resampled games."""
    rng = random.Random(seed)
    points: dict[str, list[int]] = {}
    for _ in range(RESAMPLES):
        sample = rng.choices(games, k=len(games))
        for level, rating in fit_orders(sample, BOOTSTRAP_ORDERS).items():
            points.setdefault(level, []).append(rating.points)
    return {
        level: (sorted(p)[int(0.025 * len(p))], sorted(p)[int(0.975 * len(p)) - 1])
        for level, p in points.items()
    }


def fit_orders(games: list[dict[str, Any]], orders: int = ORDERS) -> dict[str, Rating]:
    """`fit` of the games in `orders` shuffled orders, each level's mu and sigma averaged: a
    person's rating follows their recent games, a level's strength is fixed, so the order the
    games happened to be played in should not move it."""
    fits = [fit(random.Random(k).sample(games, len(games))) for k in range(orders)]
    return {
        level: Rating(
            mu=statistics.fmean(f[level].mu for f in fits),
            sigma=statistics.fmean(f[level].sigma for f in fits),
            games=fits[0][level].games,
        )
        for level in fits[0]
    }


def table(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every level's fitted rating, interval, games, mean place share and CPU, best first."""
    fitted = fit_orders(games)
    intervals = bootstrap(games)
    rows = []
    for level, rating in fitted.items():
        cpu = [
            ms
            for g in games
            for who, seat_ms in zip(g["levels"], g["cpu_ms"], strict=True)
            if who == level
            for ms in seat_ms
        ]
        wins = [
            1.0 / g["stings"].count(min(g["stings"])) if s == min(g["stings"]) else 0.0
            for g in games
            for who, s in zip(g["levels"], g["stings"], strict=True)
            if who == level
        ]
        rows.append(
            {
                "level": level,
                "label": bees.LABEL[level],
                "points": rating.points,
                "ci95": list(intervals[level]),
                "mu": round(rating.mu, 3),
                "sigma": round(rating.sigma, 3),
                "games": rating.games,
                "seats": len(wins),
                "win_share": round(statistics.fmean(wins), 4),
                "cpu_ms_median": round(statistics.median(cpu), 2) if cpu else 0.0,
                "cpu_ms_p99": round(bees.percentile(cpu, 99), 2) if cpu else 0.0,
            }
        )
    return sorted(rows, key=lambda r: -r["points"])


def print_table(rows: list[dict[str, Any]], games: list[dict[str, Any]]) -> None:
    by_size = {p: sum(1 for g in games if g["players"] == p) for p in (4, 8)}
    print(
        f"ratings of the levels (openskill Plackett-Luce as for people, points = mu x"
        f" {POINTS_PER_MU}), {by_size[4]} games at 4 seats and {by_size[8]} at 8"
    )
    print("| level | rating [95%] | mu / sigma | games (seats) | win share | CPU ms median / p99 |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        low, high = r["ci95"]
        print(
            f"| {r['label']} | **{r['points']:,}** [{low:,}, {high:,}] | {r['mu']:.2f} /"
            f" {r['sigma']:.2f} | {r['games']} ({r['seats']}) | {100 * r['win_share']:.1f}% |"
            f" {r['cpu_ms_median']:.1f} / {r['cpu_ms_p99']:.1f} |"
        )
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rated = ", ".join(
        f'"{r["level"]}": Rated({r["points"]}, {r["ci95"][0]}, {r["ci95"][1]})'
        for r in sorted(rows, key=lambda r: POOL.index(r["level"]))
        if r["level"] in LEVELS
    )
    print(f"for service/domain/rules/levels.py: RATINGS = {{{rated}}}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(map(str, GAMES)), help="at 4 seats,at 8")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--json", help="also write the games and the table to this file")
    parser.add_argument("--refit", help="fit the games of an earlier run's --json, play none")
    args = parser.parse_args(argv)
    if args.refit:
        with open(args.refit, encoding="utf-8") as f:
            games = json.load(f)["games"]
    else:
        four, eight = (int(n) for n in args.games.split(","))
        tasks = [(4, n) for n in range(four)] + [(8, n) for n in range(eight)]
        started = time.perf_counter()
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            games = []
            for game in pool.map(_play_star, tasks):
                games.append(game)
                if len(games) % 10 == 0:
                    bees.say(f"ratings: {len(games)} games, {time.perf_counter() - started:.0f} s")
                    if args.json:  # kept as it goes, so a run cut short keeps what it played
                        with open(args.json, "w", encoding="utf-8") as out:
                            json.dump({"games": games, "table": None}, out)
    rows = table(games)
    print_table(rows, games)
    if args.json and not args.refit:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"games": games, "table": rows}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
