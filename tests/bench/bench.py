"""Benchmarks: ``python -m tests.bench.bench [--quick]`` (``make bench``, ``make bench-quick``).

Every figure is a **ratio against a baseline measured in the same run**, interleaved with it and
repeated (``--rounds``), reported as the median and the spread (min–max) over the rounds. The
machine is small and shared, so absolute figures drift from minute to minute; a ratio of two
things measured seconds apart does not. One run, against a fresh ``swarm_bench_<random>``
database dropped afterwards:

1. **engine ÷ plain loop**: whole games per second through the Decider (``decide`` and the
   resulting state, as the service drives it), ÷ a plain Python loop of the same rules with no
   events, no commands and no immutable state (``plain_game`` below); 4 and 8 players, random
   play and the bee policy on every seat (the plain loop then runs the same heuristic on plain
   sets). The plain loop's bee games are checked to end with the same stings as the engine's.
2. **cold rebuild ÷ bare SELECT**: load a stored 4-player game (about 100 events) the way the
   service does, decoded and folded, ÷ a bare ``SELECT`` of the same rows (all columns, as
   asyncpg records, nothing decoded).
3. **submitMove ÷ minimal endpoint**: solo moves over HTTP (``POST /games/{id}/moves``, the
   service as its own process) ÷ a minimal Litestar endpoint doing one INSERT and commit
   (``tests/bench/minimal.py``, its own process), the same client and concurrency, at 1, 8 and
   32 concurrent clients; and the service's moves/s at 32 clients ÷ at 1.
4. **8 people racing on one game**: an 8-seat online table of eight people who all confirm as
   soon as a turn starts, on one service instance and on two (people alternate between them):
   moves/s, p99, and how many moves were refused because another was appended first.

Optional (``--games 1,10,100``): online runs of many concurrent games with SSE followers
(``tests/bench/loadgen.py``); ``--clock-games 20``: clock lateness runs.

The HTTP client is a minimal HTTP/1.1 keep-alive client on asyncio streams (``RawHttp``), so the
client process costs little next to the servers it measures. Results are printed as a table and
written to ``bench-results.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import psycopg

from service.domain import chain
from service.domain.rules import engine
from service.domain.rules.bees import bee_commands
from service.domain.rules.cards import STEM_CAPACITY, deck, pile_stings, stings
from service.domain.rules.commands import ConfirmPick, StartGame
from service.domain.rules.engine import GameState, initial_state
from service.domain.rules.events import decode_events, encode_event, event_type
from service.domain.rules.simulate import bee_seats, heuristic_vs_random, shuffled_deck
from service.store.database import drop_database, ensure_database, provide_database_url
from service.store.events import EventStore
from service.store.log import NewEvent, StreamAppend
from service.store.migrate import migrate
from service.store.pool import Pool, open_pool
from tests.bench import loadgen

RESULTS_FILE = Path("bench-results.json")
SOLO_PLAYERS = 4  # seats at each HTTP solo table (the caller plus three bees)
CONCURRENCY = (1, 8, 32)


@dataclass(frozen=True)
class Settings:
    rounds: int
    engine_seconds: float  # each engine / plain-loop slice
    rebuild_games: int
    rebuild_seconds: float  # each rebuild / SELECT slice
    http_seconds: float  # each submitMove / minimal-endpoint slice
    race_seconds: float  # each racing slice


FULL = Settings(
    rounds=5,
    engine_seconds=0.6,
    rebuild_games=200,
    rebuild_seconds=0.4,
    http_seconds=4.0,
    race_seconds=6.0,
)
QUICK = Settings(
    rounds=2,
    engine_seconds=0.3,
    rebuild_games=40,
    rebuild_seconds=0.5,
    http_seconds=2.0,
    race_seconds=3.0,
)


# --- small helpers ----------------------------------------------------------------------------


def percentile(samples: list[float], p: float) -> float:
    """Nearest-rank percentile of ``samples`` (0 when empty)."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), round(p / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def latency_ms(samples: list[float]) -> dict[str, float]:
    return {f"p{p}": round(percentile(samples, p) * 1000, 2) for p in (50, 95, 99)}


def spread(values: list[float]) -> dict[str, float]:
    """Median and min–max of one figure over the rounds."""
    return {
        "median": round(statistics.median(values), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
        "rounds": len(values),
    }


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cpu_seconds(pid: int) -> float:
    try:
        return loadgen.cpu_seconds(pid)
    except OSError:
        return 0.0


# --- 1. engine ÷ plain loop -------------------------------------------------------------------


def engine_game(
    players: int, bees: bool, rng: random.Random, order: tuple[int, ...] | None = None
) -> tuple[GameState, int]:
    """One game through the Decider as the service drives it (`engine.decide_and_evolve`: the
    events and the state after them); bee seats pick with the bee policy or at random."""
    seats = bee_seats(players)
    deal = order or shuffled_deck(players, rng)
    state, events = engine.decide_and_evolve(
        StartGame(game_id="sim", table_id="sim", seats=seats, deck_order=deal), initial_state
    )
    count = len(events)
    while state.phase != "ended":
        if bees:
            picks = bee_commands(state)
        else:
            picks = [
                ConfirmPick(seat=s.number, bee=rng.choice(s.hand))
                for s in state.seats
                if s.playing and s.confirmed is None
            ]
        for pick in picks:
            state, events = engine.decide_and_evolve(pick, state)
            count += len(events)
    return state, count


def _poisson_at_least(k: int, mean: float) -> float:
    if k <= 0:
        return 1.0
    below = sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k))
    return max(0.0, 1.0 - below)


def _plain_bee(hand: list[int], stems: list[list[int]], unseen: set[int], players: int) -> int:
    """The bee heuristic of ``service/domain/rules/bees.py`` on plain lists and sets."""
    stem_stings = [pile_stings(s) for s in stems]
    cheapest = min(range(4), key=lambda i: (stem_stings[i], len(stems[i]), i))
    hand_size = max(len(hand), 1)
    others = unseen - set(hand)
    best: tuple[float, int, int] | None = None
    for bee in hand:
        target = -1
        top_best = 0
        for i, s in enumerate(stems):
            top = s[-1]
            if top_best < top < bee:
                target, top_best = i, top
        if target < 0:
            risk = float(stem_stings[cheapest])
        elif len(stems[target]) >= STEM_CAPACITY:
            risk = float(stem_stings[target])
        else:
            stem = stems[target]
            gap = sum(1 for b in others if stem[-1] < b < bee)
            needed = STEM_CAPACITY - len(stem)
            chance = _poisson_at_least(needed, gap / hand_size)
            risk = chance * (stem_stings[target] + 1.5 * needed) + 0.001 * gap
        key = (risk, -stings(bee), bee)
        if best is None or key < best:
            best = key
    assert best is not None
    return best[2]


def plain_game(order: tuple[int, ...], players: int, bees: bool, rng: random.Random) -> list[int]:
    """The rules as a plain loop: no events, no commands, mutable lists. Returns the stings."""
    hands = [sorted(order[i * 10 : (i + 1) * 10]) for i in range(players)]
    stems = [[b] for b in order[players * 10 :]]
    score = [0] * players
    unseen = set(deck(players)) - set(order[players * 10 :])
    for _ in range(10):
        picks: list[tuple[int, int]] = []
        for p in range(players):
            bee = _plain_bee(hands[p], stems, unseen, players) if bees else rng.choice(hands[p])
            hands[p].remove(bee)
            picks.append((bee, p))
        picks.sort()
        for bee, p in picks:
            unseen.discard(bee)
            target = -1
            top_best = 0
            for i, s in enumerate(stems):
                top = s[-1]
                if top_best < top < bee:
                    target, top_best = i, top
            if target < 0:
                target = min(range(4), key=lambda i: (pile_stings(stems[i]), len(stems[i]), i))
                score[p] += pile_stings(stems[target])
                stems[target] = [bee]
            elif len(stems[target]) >= STEM_CAPACITY:
                score[p] += pile_stings(stems[target])
                stems[target] = [bee]
            else:
                stems[target].append(bee)
    return score


def check_plain_loop(players: int, games: int = 20) -> None:
    """The plain loop plays the same rules: bee games end with the same stings."""
    for seed in range(games):
        state, _ = engine_game(players, True, random.Random(seed))
        order = shuffled_deck(players, random.Random(seed))
        plain = plain_game(order, players, True, random.Random(seed))
        if plain != [s.stings for s in state.seats]:
            raise AssertionError(f"plain loop differs from the engine ({players} players, {seed})")


def _games_per_s(play: Callable[[], object], seconds: float) -> float:
    games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        play()
        games += 1
        now = time.perf_counter()
        if now >= deadline:
            return games / (now - start)


def _engine_vs_plain(players: int, bees: bool, settings: Settings) -> dict[str, Any]:
    rng = random.Random(players)
    orders = [shuffled_deck(players, rng) for _ in range(64)]  # both play the same deals
    played = [0, 0]

    def engine_one() -> None:
        played[0] += 1
        engine_game(players, bees, rng, orders[played[0] % 64])

    def plain_one() -> None:
        played[1] += 1
        plain_game(orders[played[1] % 64], players, bees, rng)

    ratios, engine_rates, plain_rates = [], [], []
    for r in range(settings.rounds):
        pair: list[tuple[str, Callable[[], object]]] = [
            ("engine", engine_one),
            ("plain", plain_one),
        ]
        rates = {
            name: _games_per_s(fn, settings.engine_seconds)
            for name, fn in (pair if r % 2 == 0 else pair[::-1])
        }
        engine_rates.append(rates["engine"])
        plain_rates.append(rates["plain"])
        ratios.append(rates["engine"] / rates["plain"])
    _, events = engine_game(players, bees, random.Random(0))
    return {
        "players": players,
        "play": "bees" if bees else "random",
        "engine_games_per_s": spread(engine_rates),
        "plain_games_per_s": spread(plain_rates),
        "events_per_game": events,
        "ratio": spread(ratios),
    }


def bench_engine(settings: Settings) -> list[dict[str, Any]]:
    results = []
    for players in (4, 8):
        check_plain_loop(players)
        for bees in (False, True):
            results.append(_engine_vs_plain(players, bees, settings))
    return results


# --- 2. cold rebuild ÷ bare SELECT ------------------------------------------------------------


_BENCH_SERVER_SEED = bytes(32)


async def store_games(store: EventStore, count: int, seed: int = 2) -> dict[str, GameState]:
    """Append ``count`` simulated 4-player bee games, one append each; return the final states."""
    rng = random.Random(seed)
    finals: dict[str, GameState] = {}
    seats = bee_seats(4)
    for _ in range(count):
        state, log = initial_state, []
        state, events = engine.decide_and_evolve(
            StartGame(game_id="sim", table_id="sim", seats=seats, deck_order=shuffled_deck(4, rng)),
            state,
        )
        log += events
        while state.phase != "ended":
            for pick in bee_commands(state):
                state, events = engine.decide_and_evolve(pick, state)
                log += events
        game_id = f"bench-{uuid.uuid4()}"
        stream = f"game-{game_id}"
        await store.append(
            StreamAppend(
                stream=stream,
                expected_version=0,
                events=[NewEvent(type=event_type(e), data=encode_event(e)) for e in log],
                # chain v2 seals the hands and picks under the game's key (any seed will do)
                seal_keys={game_id: chain.seal_key(game_id, _BENCH_SERVER_SEED)},
            ),
            metadata={"command": "bench"},
        )
        finals[stream] = state
    return finals


async def rebuild(store: EventStore, stream: str) -> GameState:
    """A cold load of a game, as the service does it."""
    return engine.fold(await store.read_events(stream, decode_events))


# The rows the store reads for a stream, every column, as records: the baseline does nothing else.
_BARE_SELECT = (
    "select position, stream, version, type, data::text, metadata::text, recorded_at, hash"
    " from events where stream = $1 order by version"
)


async def bench_rebuild(pool: Pool, store: EventStore, settings: Settings) -> dict[str, Any]:
    say(f"storing {settings.rebuild_games} games…")
    t0 = time.perf_counter()
    finals = await store_games(store, settings.rebuild_games)
    store_s = time.perf_counter() - t0
    streams = list(finals)
    for stream in streams:  # correctness first, untimed
        if await rebuild(store, stream) != finals[stream]:
            raise AssertionError(f"rebuilt state of {stream} differs from the simulated game")

    async def rate(one: Callable[[str], Awaitable[object]]) -> float:
        games = 0
        start = time.perf_counter()
        while True:
            for stream in streams:
                await one(stream)
                games += 1
                now = time.perf_counter()
                if now - start >= settings.rebuild_seconds:
                    return games / (now - start)

    async def select(stream: str) -> object:
        return await pool.fetch(_BARE_SELECT, stream)

    async def load(stream: str) -> object:
        return await rebuild(store, stream)

    ratios, loads, selects = [], [], []
    say("rebuild ÷ SELECT…")
    for r in range(settings.rounds * 3):  # short slices, many rounds: the noisiest figure
        pair = [("rebuild", load), ("select", select)]
        rates = {name: await rate(fn) for name, fn in (pair if r % 2 == 0 else pair[::-1])}
        loads.append(rates["rebuild"])
        selects.append(rates["select"])
        ratios.append(rates["rebuild"] / rates["select"])
    return {
        "games": len(streams),
        "store_games_per_s": round(len(streams) / store_s, 1),
        "rebuild_games_per_s": spread(loads),
        "select_per_s": spread(selects),
        "ratio": spread(ratios),
    }


# --- HTTP: a minimal keep-alive client ---------------------------------------------------------


class RawHttp:
    """One HTTP/1.1 keep-alive connection; JSON in, (status, JSON bytes) out."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.token = ""
        self.retry_after: float | None = None  # the last answer's Retry-After, in seconds

    async def _connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        for attempt in range(3):
            try:
                return await self._request(method, path, body)
            except (ConnectionError, asyncio.IncompleteReadError):
                if attempt == 2:
                    raise
                await self.close()
        raise AssertionError("unreachable")

    async def _request(self, method: str, path: str, body: Any) -> tuple[int, bytes]:
        if self.writer is None:
            await self._connect()
        assert self.reader is not None and self.writer is not None
        payload = b"" if body is None else msgspec.json.encode(body)
        auth = f"Authorization: Bearer {self.token}\r\n" if self.token else ""
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        self.writer.write(head.encode() + payload)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)
        }
        if headers.get("transfer-encoding") == "chunked":
            data = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n"))[:-2], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                data += chunk[:-2]
        else:
            data = await self.reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection") == "close":
            await self.close()
        retry_after = headers.get("retry-after", "")
        self.retry_after = float(retry_after) if retry_after.isdigit() else None
        return status, data

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None


def server_env(database_url: str, **more: str) -> dict[str, str]:
    """The environment of a benchmarked server. Throughput is measured, not the rate limit
    (SWARM_RATE_LIMIT, docs/scaling.md), and every guest comes from one address: no
    per-address sign-up limits either."""
    return dict(
        os.environ,
        DATABASE_URL=database_url,
        SWARM_RATE_LIMIT="0",
        SWARM_GUESTS_PER_HOUR="0",
        SWARM_ACCOUNTS_PER_HOUR="0",
        **more,
    )


class Server:
    """A service process (``python -m service run`` or the minimal endpoint), its output in a
    temporary log file."""

    def __init__(
        self, database_url: str, module: str = "service", *args: str, cwd: str | None = None
    ) -> None:
        self.port = free_port()
        self.log = Path(tempfile.mkstemp(prefix=f"swarm-bench-{module}-", suffix=".log")[1])
        env = server_env(database_url)
        command = [sys.executable, "-m", module, *args, "--port", str(self.port)]
        with self.log.open("wb") as out:
            # A session of its own, as a deployment's unit or container: with the kernel's
            # autogroup scheduling (kernel.sched_autogroup_enabled) a session is what gets a
            # share of the CPU, so a server in the load generator's session would share the
            # generator's (issue 28).
            self.process = subprocess.Popen(
                command,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                start_new_session=True,
            )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def wait_healthy(self, timeout: float = 60.0) -> None:
        start = time.perf_counter()
        while time.perf_counter() - start < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.tail()}")
            http = RawHttp(self.port)
            try:
                if (await http.request("GET", "/health"))[0] == 200:
                    return
            except OSError:
                pass
            finally:
                await http.close()
            await asyncio.sleep(0.2)
        raise RuntimeError(f"server not healthy after {timeout} s:\n{self.tail()}")

    def stop(self) -> int | None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def problems(self) -> list[str]:
        """Log lines that are errors: a JSON line (every line the service writes) at level
        error or critical, or carrying an exception or an error; any other line that looks
        like one (a traceback, ERROR, an exception, a 5xx answer). uvicorn's own logger is
        named "uvicorn.error" whatever it says, so a JSON line is read, not searched."""
        found: list[str] = []
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if isinstance(record, dict):
                erred = record.get("level") in ("error", "critical")
                if erred or "exception" in record or "error" in record:
                    found.append(line.strip())
                continue
            low = line.lower()
            if "traceback" in low or "error" in low or "exception" in low or '" 5' in line:
                found.append(line.strip())
        return found


@dataclass
class Load:
    ops: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def per_s(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0


async def timed(
    workers: list[Callable[[Load, list[float]], Awaitable[None]]], seconds: float
) -> Load:
    load = Load()
    stop_at = [time.perf_counter() + seconds]
    t0 = time.perf_counter()
    await asyncio.gather(*(w(load, stop_at) for w in workers))
    load.seconds = time.perf_counter() - t0
    return load


# --- 3. submitMove ÷ minimal endpoint ---------------------------------------------------------


@dataclass
class SoloClient:
    http: RawHttp
    table_id: str = ""
    view: dict[str, Any] = field(default_factory=dict)

    async def set_up(self) -> None:
        for attempt in range(10):
            status, body = await self.http.request("POST", "/guests", {"name": "Bench"})
            if status == 201:
                break
            await asyncio.sleep(0.2 * (attempt + 1))
        else:
            raise RuntimeError(f"createGuest {status}: {body[:200]!r}")
        self.http.token = msgspec.json.decode(body)["token"]
        status, body = await self.http.request("POST", "/solo-tables", {"players": SOLO_PLAYERS})
        if status != 201:
            raise RuntimeError(f"createSoloTable {status}: {body[:200]!r}")
        table = msgspec.json.decode(body)
        self.table_id = table["table_id"]
        self.view = table["game"]

    async def play(self, load: Load, stop_at: list[float]) -> None:
        """Moves as fast as the answers come, playing again when a game ends."""
        while time.perf_counter() < stop_at[0]:
            view = self.view
            game_id = view["game_id"]
            if view["phase"] == "ended":
                status, body = await self.http.request("POST", f"/tables/{self.table_id}/games")
                if status != 201:
                    load.errors[f"playAgain {status}"] += 1
                    await asyncio.sleep(0.05)
                    continue
                self.view = msgspec.json.decode(body)["game"]
                continue
            if view["phase"] == "choosing" and view["choice"] and view["choice"]["yours"]:
                move: dict[str, Any] = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
            elif view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
                move = {"type": "confirm", "bee": view["hand"][0]}
            else:
                status, body = await self.http.request("GET", f"/games/{game_id}")
                self.view = msgspec.json.decode(body)
                continue
            move["move_id"] = uuid.uuid4().hex
            t0 = time.perf_counter()
            status, body = await self.http.request("POST", f"/games/{game_id}/moves", move)
            if status != 200:
                load.errors[f"submitMove {status}"] += 1
                status, body = await self.http.request("GET", f"/games/{game_id}")
                self.view = msgspec.json.decode(body)
                continue
            load.latencies.append(time.perf_counter() - t0)
            load.ops += 1
            self.view = msgspec.json.decode(body)


@dataclass
class OnlineClient:
    """Two people at a 2-seat online table (no bee players; the clock at 600 s, so it never
    plays), driven by one client: whoever may move moves; when the mover's answer shows nothing
    left for them to do, the other person's view is fetched (one GET, not counted as a move)."""

    host: RawHttp
    guest: RawHttp
    table_id: str = ""
    views: list[dict[str, Any]] = field(default_factory=list)

    async def set_up(self) -> None:
        for i, http in enumerate((self.host, self.guest)):
            guest = await _json(http, "POST", "/guests", {"name": f"Online {i + 1}"}, ok=201)
            http.token = guest["token"]
        table = await _json(
            self.host,
            "POST",
            "/tables",
            {"seats": 2, "stake": 0, "turn_seconds": 600, "choice_seconds": 600},
            ok=201,
        )
        self.table_id = table["table_id"]
        joined = await _json(self.guest, "POST", f"/tables/{self.table_id}/seats")
        game_id = joined["game"]["game_id"]
        self.views = [await _json(h, "GET", f"/games/{game_id}") for h in (self.host, self.guest)]

    @staticmethod
    def _move(view: dict[str, Any]) -> dict[str, Any] | None:
        if view["phase"] == "choosing" and view["choice"] and view["choice"]["yours"]:
            return {"type": "take_stem", "stem": view["choice"]["cheapest"]}
        if view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
            return {"type": "confirm", "bee": view["hand"][0]}
        return None

    async def play(self, load: Load, stop_at: list[float]) -> None:
        people = (self.host, self.guest)
        mover = 0
        while time.perf_counter() < stop_at[0]:
            view = self.views[mover]
            if view["phase"] == "ended":
                status, body = await self.host.request("POST", f"/tables/{self.table_id}/games")
                if status != 201:
                    load.errors[f"playAgain {status}"] += 1
                    await asyncio.sleep(0.05)
                    continue
                game_id = msgspec.json.decode(body)["game"]["game_id"]
                self.views = [await _json(h, "GET", f"/games/{game_id}") for h in people]
                continue
            move = self._move(view)
            if move is None:
                mover = 1 - mover
                status, body = await people[mover].request("GET", f"/games/{view['game_id']}")
                self.views[mover] = msgspec.json.decode(body)
                continue
            move["move_id"] = uuid.uuid4().hex
            t0 = time.perf_counter()
            status, body = await people[mover].request(
                "POST", f"/games/{view['game_id']}/moves", move
            )
            if status != 200:
                load.errors[f"submitMove {status}"] += 1
                status, body = await people[mover].request("GET", f"/games/{view['game_id']}")
                self.views[mover] = msgspec.json.decode(body)
                continue
            load.latencies.append(time.perf_counter() - t0)
            load.ops += 1
            self.views[mover] = msgspec.json.decode(body)


async def insert_worker(http: RawHttp, load: Load, stop_at: list[float]) -> None:
    body = {"type": "pick_confirmed", "seat": 3, "bee": 27, "at": None}
    while time.perf_counter() < stop_at[0]:
        t0 = time.perf_counter()
        status, _ = await http.request("POST", "/insert", body)
        if status != 200:
            load.errors[f"insert {status}"] += 1
            continue
        load.latencies.append(time.perf_counter() - t0)
        load.ops += 1


async def bench_http(
    service: Server, minimal: Server, settings: Settings, profile_to: Path | None = None
) -> dict[str, Any]:
    say(f"setting up {max(CONCURRENCY)} solo tables…")
    solos = [SoloClient(RawHttp(service.port)) for _ in range(max(CONCURRENCY))]
    for i in range(0, len(solos), 8):
        await asyncio.gather(*(s.set_up() for s in solos[i : i + 8]))
    inserts = [RawHttp(minimal.port) for _ in range(max(CONCURRENCY))]
    say(f"setting up {max(CONCURRENCY)} online tables of two people…")
    onlines = [
        OnlineClient(RawHttp(service.port), RawHttp(service.port)) for _ in range(max(CONCURRENCY))
    ]
    for i in range(0, len(onlines), 8):
        await asyncio.gather(*(o.set_up() for o in onlines[i : i + 8]))
    by_k: dict[int, dict[str, list[Any]]] = {
        k: {
            "ratio": [],
            "moves": [],
            "inserts": [],
            "lat_moves": [],
            "lat_inserts": [],
            "online": [],
            "online_ratio": [],
            "lat_online": [],
        }
        for k in CONCURRENCY
    }
    cpu: defaultdict[str, float] = defaultdict(float)
    ops: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for r in range(settings.rounds):
        for k in CONCURRENCY:
            say(f"round {r + 1}/{settings.rounds}: {k} clients…")

            loads: list[tuple[str, list[Callable[[Load, list[float]], Awaitable[None]]]]] = [
                ("moves", [s.play for s in solos[:k]]),
                ("inserts", [partial(insert_worker, h) for h in inserts[:k]]),
                ("online", [o.play for o in onlines[:k]]),
            ]
            turn = (r + k) % len(loads)  # each load goes first, second and last in turn
            got: dict[str, Load] = {}
            for name, workers in loads[turn:] + loads[:turn]:
                pid = minimal.process.pid if name == "inserts" else service.process.pid
                server0, client0 = cpu_seconds(pid), time.process_time()
                got[name] = await timed(workers, settings.http_seconds)
                cpu[f"{name}_server"] += cpu_seconds(pid) - server0
                cpu[f"{name}_client"] += time.process_time() - client0
                cpu[f"{name}_wall"] += got[name].seconds
                ops[name] += got[name].ops
                errors.update(got[name].errors)
            entry = by_k[k]
            entry["moves"].append(got["moves"].per_s)
            entry["inserts"].append(got["inserts"].per_s)
            entry["ratio"].append(got["moves"].per_s / got["inserts"].per_s)
            entry["lat_moves"] += got["moves"].latencies
            entry["lat_inserts"] += got["inserts"].latencies
            entry["online"].append(got["online"].per_s)
            entry["online_ratio"].append(got["online"].per_s / got["inserts"].per_s)
            entry["lat_online"] += got["online"].latencies
    profile: dict[str, Any] | None = None
    if profile_to is not None:  # one more 8-client slice, sampled (not part of the ratios)
        say("profiling submitMove at 8 clients…")
        spy = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("py-spy")),
                "record",
                "--pid",
                str(service.process.pid),
                "--duration",
                str(int(settings.http_seconds * 2)),
                "--rate",
                "200",
                "--format",
                "raw",
                "--output",
                str(profile_to),
                "--nonblocking",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        await timed([s.play for s in solos[:8]], settings.http_seconds * 2)
        spy.wait(timeout=30)
        profile = loadgen.summarise_profile(profile_to) if profile_to.exists() else None
    for http in [s.http for s in solos] + inserts + [h for o in onlines for h in (o.host, o.guest)]:
        await http.close()

    def scaling(name: str) -> list[float]:
        top = by_k[max(CONCURRENCY)][name]
        return [m32 / m1 for m1, m32 in zip(by_k[1][name], top, strict=True)]

    return {
        "by_clients": [
            {
                "clients": k,
                "moves_per_s": spread(by_k[k]["moves"]),
                "inserts_per_s": spread(by_k[k]["inserts"]),
                "ratio": spread(by_k[k]["ratio"]),
                "moves_ms": latency_ms(by_k[k]["lat_moves"]),
                "inserts_ms": latency_ms(by_k[k]["lat_inserts"]),
                "online_per_s": spread(by_k[k]["online"]),
                "online_ratio": spread(by_k[k]["online_ratio"]),
                "online_ms": latency_ms(by_k[k]["lat_online"]),
            }
            for k in CONCURRENCY
        ],
        "scaling_32_to_1": spread(scaling("moves")),
        "online_scaling_32_to_1": spread(scaling("online")),
        "cpu_s": {k: round(v, 1) for k, v in cpu.items()},
        # the server's CPU-seconds over its moves in the same slices (the GETs and play again
        # the clients need between moves included)
        "server_cpu_ms_per": {
            name: round(1000 * cpu[f"{name}_server"] / n, 2) for name, n in ops.items() if n
        },
        "errors": dict(errors),
        "profile": profile,
    }


# --- 4. eight people racing on one game -------------------------------------------------------


async def _json(http: RawHttp, method: str, path: str, body: Any = None, ok: int = 200) -> Any:
    for attempt in range(10):
        status, data = await http.request(method, path, body)
        if status == ok:
            return msgspec.json.decode(data)
        if status in (429, 503) or (status == 409 and b"concurrent-change" in data):
            await asyncio.sleep(0.05 * (attempt + 1))
            continue
        raise RuntimeError(f"{method} {path} -> {status} {data[:200]!r}")
    raise RuntimeError(f"{method} {path}: gave up")


async def race(ports: list[int], seconds: float, seed: int) -> dict[str, Any]:
    """Eight people at an 8-seat online table, person i on instance ``i % len(ports)``; each
    confirms a random bee the moment it sees a turn start (polling its view every 5 ms)."""
    rng = random.Random(seed)
    people = [RawHttp(ports[i % len(ports)]) for i in range(8)]
    for i, http in enumerate(people):
        guest = await _json(http, "POST", "/guests", {"name": f"Racer {i + 1}"}, ok=201)
        http.token = guest["token"]
    table = await _json(
        people[0],
        "POST",
        "/tables",
        {"seats": 8, "stake": 0, "turn_seconds": 60, "choice_seconds": 60},
        ok=201,
    )
    table_id = table["table_id"]
    joined: dict[str, Any] = {}
    for http in people[1:]:
        joined = await _json(http, "POST", f"/tables/{table_id}/seats")
    game = [joined["game"]["game_id"]]
    load = Load()
    outcomes: Counter[str] = Counter()
    games = [0]

    async def person(i: int, stop_at: list[float]) -> None:
        http = people[i]
        while time.perf_counter() < stop_at[0]:
            game_id = game[0]
            status, data = await http.request("GET", f"/games/{game_id}")
            if status != 200:
                outcomes[f"getGame {status}"] += 1
                await asyncio.sleep(0.01)
                continue
            view = msgspec.json.decode(data)
            if view["phase"] == "ended":
                if i == 0 and game[0] == game_id:
                    again = await _json(http, "POST", f"/tables/{table_id}/games", ok=201)
                    game[0] = again["game"]["game_id"]
                    games[0] += 1
                else:
                    await asyncio.sleep(0.005)
                continue
            if view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
                move: dict[str, Any] = {"type": "confirm", "bee": rng.choice(view["hand"])}
            elif view["phase"] == "choosing" and view["choice"] and view["choice"]["yours"]:
                move = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
            else:
                await asyncio.sleep(0.005)
                continue
            move["move_id"] = uuid.uuid4().hex
            t0 = time.perf_counter()
            status, data = await http.request("POST", f"/games/{game_id}/moves", move)
            elapsed = time.perf_counter() - t0
            if status == 200:
                load.ops += 1
                load.latencies.append(elapsed)
                outcomes["2xx"] += 1
            else:
                code = msgspec.json.decode(data).get("code", "") if data else ""
                outcomes[f"{status} {code}"] += 1

    t0 = time.perf_counter()
    stop_at = [t0 + seconds]
    await asyncio.gather(*(person(i, stop_at) for i in range(8)))
    load.seconds = time.perf_counter() - t0
    for http in people:  # leaving ends the game, so no clock keeps running after the slice
        await http.request("POST", f"/tables/{table_id}/leave")
        await http.close()
    return {
        "moves_per_s": load.per_s,
        "moves": load.ops,
        "latencies": load.latencies,
        "conflicts": sum(n for k, n in outcomes.items() if k.startswith("409")),
        "outcomes": dict(outcomes),
        "games": games[0],
    }


async def bench_race(one: Server, two: Server, settings: Settings) -> dict[str, Any]:
    runs: dict[str, dict[str, list[Any]]] = {
        name: {"moves": [], "lat": [], "conflicts": [], "outcomes": []} for name in ("one", "two")
    }
    for r in range(settings.rounds):
        pair = [("one", [one.port]), ("two", [one.port, two.port])]
        for name, ports in pair if r % 2 == 0 else pair[::-1]:
            say(f"round {r + 1}/{settings.rounds}: 8 people racing on {name} instance(s)…")
            got = await race(ports, settings.race_seconds, seed=r)
            runs[name]["moves"].append(got["moves_per_s"])
            runs[name]["lat"] += got["latencies"]
            runs[name]["conflicts"].append(got["conflicts"])
            runs[name]["outcomes"].append(got["outcomes"])
    return {
        name: {
            "moves_per_s": spread(v["moves"]),
            "moves_ms": latency_ms(v["lat"]),
            "moves": len(v["lat"]),
            "conflicts": sum(v["conflicts"]),
            "outcomes": sum((Counter(o) for o in v["outcomes"]), Counter()),
        }
        for name, v in runs.items()
    }


# --- the run ----------------------------------------------------------------------------------


def machine(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        row = conn.execute("show server_version").fetchone()
        settings = conn.execute(
            "select name, setting from pg_settings"
            " where name in ('synchronous_commit', 'fsync', 'shared_buffers')"
        ).fetchall()
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "postgresql": row[0] if row else "?",
        "postgresql_settings": dict(settings),
    }


async def bench_database(url: str, settings: Settings, args: Any, results: dict[str, Any]) -> None:
    pool: Pool = await open_pool(url, min_size=1, max_size=4)
    try:
        results["rebuild"] = await bench_rebuild(pool, EventStore(pool), settings)
    finally:
        await pool.close()

    say("starting two service instances and the minimal endpoint…")
    service = Server(url, "service", "run")
    second = Server(url, "service", "run")
    minimal = Server(url, "tests.bench.minimal")
    servers = [service, second, minimal]
    try:
        await asyncio.gather(*(s.wait_healthy() for s in servers))
        profile_to = (
            Path(tempfile.mkdtemp(prefix="swarm-profile-")) / "submit-move.txt"
            if args.profile
            else None
        )
        results["http"] = await bench_http(service, minimal, settings, profile_to)
        results["race"] = await bench_race(service, second, settings)
        if args.clock_games:
            results["clock"] = []
            for games in args.clock_games:
                say(f"clock: {games} idle games with 1 s turns…")
                results["clock"].append(await loadgen.clock_run(service.base_url, url, games))
        if args.games:
            results["online"] = []
            for games in args.games:
                say(f"online: {games} concurrent games, {args.seconds} s…")
                results["online"].append(
                    await loadgen.online_run(
                        service.base_url, service.process.pid, games, args.seconds
                    )
                )
    finally:
        codes = [s.stop() for s in servers]
    problems = [p for s in servers for p in s.problems()]
    results["servers"] = {"exit_codes": codes, "log_problem_lines": problems[:10]}
    if not problems:
        for s in servers:
            s.log.unlink(missing_ok=True)


def _fmt(s: dict[str, float], digits: int = 2) -> str:
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"


def print_table(results: dict[str, Any]) -> None:
    m = results["machine"]
    print()
    print(
        f"Machine: {m['cores']} cores, Python {m['python']}, PostgreSQL {m['postgresql']} "
        f"({', '.join(f'{k}={v}' for k, v in m['postgresql_settings'].items())}); "
        f"{results['settings']['rounds']} interleaved rounds, median [min–max]"
    )
    print()
    print("  engine ÷ plain loop (games/s)")
    for e in results["engine"]:
        print(
            f"    {e['players']} players, {e['play']:<6}  {_fmt(e['ratio'], 3)}   "
            f"engine {e['engine_games_per_s']['median']:.0f}/s, "
            f"plain {e['plain_games_per_s']['median']:.0f}/s, {e['events_per_game']} events"
        )
    b = results["bees_vs_random"]
    print(
        f"    a bee player vs three random ones, {b['games']} games: {b['bee_stings']:.1f} stings "
        f"a game against {b['random_stings']:.1f}"
    )
    rb = results["rebuild"]
    print(
        f"  cold rebuild ÷ bare SELECT     {_fmt(rb['ratio'], 3)}   "
        f"rebuild {rb['rebuild_games_per_s']['median']:.0f}/s, "
        f"SELECT {rb['select_per_s']['median']:.0f}/s ({rb['games']} games of ~100 events)"
    )
    h = results["http"]
    print("  submitMove ÷ minimal INSERT endpoint (same client, same concurrency)")
    for row in h["by_clients"]:
        print(
            f"    {row['clients']:>2} clients  {_fmt(row['ratio'], 3)}   "
            f"moves {row['moves_per_s']['median']:.0f}/s p50 {row['moves_ms']['p50']} "
            f"p99 {row['moves_ms']['p99']} ms; inserts {row['inserts_per_s']['median']:.0f}/s "
            f"p50 {row['inserts_ms']['p50']} p99 {row['inserts_ms']['p99']} ms"
        )
    print(f"  moves/s at 32 clients ÷ at 1   {_fmt(h['scaling_32_to_1'])}")
    print("  online-table move (two people, no bee players) ÷ minimal INSERT endpoint")
    for row in h["by_clients"]:
        print(
            f"    {row['clients']:>2} clients  {_fmt(row['online_ratio'], 3)}   "
            f"moves {row['online_per_s']['median']:.0f}/s p50 {row['online_ms']['p50']} "
            f"p99 {row['online_ms']['p99']} ms"
        )
    print(f"  online moves/s at 32 clients ÷ at 1   {_fmt(h['online_scaling_32_to_1'])}")
    cpu = h["cpu_s"]
    print(
        f"    CPU-s: submitMove runs server {cpu.get('moves_server', 0)} client "
        f"{cpu.get('moves_client', 0)} of {cpu.get('moves_wall', 0)} s wall; minimal runs server "
        f"{cpu.get('inserts_server', 0)} client {cpu.get('inserts_client', 0)} of "
        f"{cpu.get('inserts_wall', 0)} s wall; errors {h['errors'] or 0}"
    )
    per = h["server_cpu_ms_per"]
    print("    server CPU ms per answer: " + ", ".join(f"{n} {ms}" for n, ms in per.items()))
    if h.get("profile"):
        top = ", ".join(f"{f} {pct}%" for f, pct in h["profile"]["self_pct"][:8])
        print(f"    profile of the service at 8 clients (self time): {top}")
    print("  8 people racing on one game")
    for name, r in results["race"].items():
        print(
            f"    {name} instance{'s' if name == 'two' else ''}  "
            f"{_fmt(r['moves_per_s'], 1)} moves/s   p50 {r['moves_ms']['p50']} "
            f"p99 {r['moves_ms']['p99']} ms; {r['moves']} moves, {r['conflicts']} refused as "
            f"conflicts; {dict(r['outcomes'])}"
        )
    for o in results.get("online", []):
        lat = o["submit_move_ms"]
        print(
            f"  online, {o['games']} games: {o['moves_per_s']:.1f} moves/s, submitMove p50 "
            f"{lat['p50']} p99 {lat['p99']} ms; CPU-s service {o['cpu_s']['service']} loadgen "
            f"{o['cpu_s']['loadgen']} rest {o['cpu_s']['rest']} of {o['cpu_s']['of']}"
        )
    for c in results.get("clock", []):
        late = c["late_ms"]
        print(f"  clock, {c['games']} games: late p50 {late['p50']} p99 {late['p99']} ms")
    if results["servers"]["log_problem_lines"]:
        print(f"  server log problems: {results['servers']['log_problem_lines']}")
    print(f"  total {results['total_seconds']:.1f} s; JSON in {RESULTS_FILE}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2 rounds of short slices")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5, quick 2)")
    parser.add_argument("--games", help="also online runs of N concurrent games, e.g. 1,10,100")
    parser.add_argument("--clock-games", help="also clock runs of N idle timed games, e.g. 20")
    parser.add_argument("--seconds", type=float, default=20.0, help="window of each online run")
    parser.add_argument(
        "--profile", action="store_true", help="py-spy the service in an extra 8-client slice"
    )
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    if args.rounds:
        settings = Settings(**{**settings.__dict__, "rounds": args.rounds})
    args.games = [int(g) for g in args.games.split(",")] if args.games else []
    args.clock_games = [int(g) for g in args.clock_games.split(",")] if args.clock_games else []
    started = time.perf_counter()

    server_url = provide_database_url(os.environ.get("DATABASE_URL"))
    name = f"swarm_bench_{uuid.uuid4().hex[:12]}"
    url = ensure_database(server_url, name)
    results: dict[str, Any] = {
        "machine": machine(url),
        "settings": {"quick": args.quick, **settings.__dict__},
        "database": name,
    }
    try:
        migrate(url)
        say("engine ÷ plain loop…")
        results["engine"] = bench_engine(settings)
        bee, rand = heuristic_vs_random(4, 300)  # the README's figure
        results["bees_vs_random"] = {"games": 300, "bee_stings": bee, "random_stings": rand}
        asyncio.run(bench_database(url, settings, args, results))
    finally:
        drop_database(server_url, name)
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    RESULTS_FILE.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
