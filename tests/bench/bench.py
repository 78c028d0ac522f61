"""Benchmarks: ``python -m tests.bench.bench [--quick]`` (``make bench``).

One run measures, against a fresh ``swarm_bench_<random>`` database that is dropped afterwards:

1. the rules engine alone (whole simulated games per second, bee policy on every seat);
2. cold rebuilds (read a game's stream from PostgreSQL, decode, fold) per second;
3. solo moves per second over real HTTP, the service running as a subprocess;
4. the baseline: bare single-row INSERT commits per second through asyncpg, same database,
   same concurrency, same duration (run once before and once after the HTTP load).

The machine is small and noisy, so absolute figures mean little; the ratio of HTTP moves/s to
INSERT commits/s, both measured in the same run, is the figure to watch. Results are printed as a
table and written to ``bench-results.json`` in the current directory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psycopg

from service.domain.rules.bees import choose_bee
from service.domain.rules.engine import GameState, fold
from service.domain.rules.events import Event, decode_event, encode_event, event_type
from service.domain.rules.simulate import Policy, bee_seats, play_game
from service.store.database import drop_database, ensure_database, provide_database_url
from service.store.events import EventStore, NewEvent, StreamAppend
from service.store.migrate import migrate
from service.store.pool import Pool, open_pool
from tests.bench import loadgen

RESULTS_FILE = Path("bench-results.json")
SOLO_PLAYERS = 4  # seats at each HTTP solo table (the caller plus three bees)


@dataclass(frozen=True)
class Settings:
    engine_seconds: float  # per player count
    rebuild_games: int
    rebuild_seconds: float  # minimum; whole passes over the stored games
    clients: int  # concurrency K for HTTP and the INSERT baseline
    load_seconds: float  # duration of each HTTP / INSERT run
    online_games: tuple[int, ...] = (1, 10, 100)  # concurrent online games, one run each
    online_seconds: float = 20.0  # measured window of each online run
    clock_games: tuple[int, ...] = (20, 200)  # idle timed games (the clock plays every turn)


FULL = Settings(
    engine_seconds=4.0, rebuild_games=200, rebuild_seconds=3.0, clients=8, load_seconds=15.0
)
QUICK = Settings(
    engine_seconds=1.0,
    rebuild_games=50,
    rebuild_seconds=1.0,
    clients=2,
    load_seconds=4.0,
    online_games=(1, 10),
    online_seconds=5.0,
    clock_games=(10,),
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
    return {
        "p50": round(percentile(samples, 50) * 1000, 2),
        "p95": round(percentile(samples, 95) * 1000, 2),
        "p99": round(percentile(samples, 99) * 1000, 2),
    }


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- 1. rules engine --------------------------------------------------------------------------


def bench_engine(players: int, seconds: float, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    seats = bee_seats(players)
    policies: list[Policy] = [choose_bee] * players
    play_game(seats, policies, rng)  # warm up
    games = 0
    events = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state, log = play_game(seats, policies, rng)
        assert state.phase == "ended"
        games += 1
        events += len(log)
        now = time.perf_counter()
        if now >= deadline:
            break
    elapsed = now - start
    return {
        "players": players,
        "games": games,
        "events": events,
        "seconds": round(elapsed, 3),
        "games_per_s": round(games / elapsed, 1),
        "events_per_s": round(events / elapsed, 1),
        "events_per_game": round(events / games, 1),
    }


# --- 2. cold rebuild --------------------------------------------------------------------------


async def store_games(store: EventStore, count: int, seed: int = 2) -> dict[str, GameState]:
    """Append the events of ``count`` simulated 4-player games; return each stream's final state."""
    rng = random.Random(seed)
    seats = bee_seats(4)
    policies: list[Policy] = [choose_bee] * 4
    finals: dict[str, GameState] = {}
    for _ in range(count):
        state, log = play_game(seats, policies, rng)
        stream = f"game-bench-{uuid.uuid4()}"
        await store.append(
            StreamAppend(
                stream=stream,
                expected_version=0,
                events=[NewEvent(type=event_type(e), data=encode_event(e)) for e in log],
            ),
            metadata={"command": "bench"},
        )
        finals[stream] = state
    return finals


async def rebuild(store: EventStore, stream: str) -> tuple[GameState, int]:
    recorded = await store.read_stream(stream)
    events: list[Event] = [decode_event(r.data) for r in recorded]
    return fold(events), len(events)


async def bench_rebuild(
    store: EventStore, finals: dict[str, GameState], seconds: float, concurrency: int
) -> dict[str, Any]:
    streams = list(finals)
    # Correctness first (untimed): every rebuilt state equals the simulated one.
    for stream in streams:
        state, _ = await rebuild(store, stream)
        if state != finals[stream]:
            raise AssertionError(f"rebuilt state of {stream} differs from the simulated game")

    games = 0
    events = 0
    latencies: list[float] = []
    start = time.perf_counter()
    while True:
        queue = list(streams)

        async def worker(queue: list[str]) -> None:
            nonlocal games, events
            while queue:
                stream = queue.pop()
                t0 = time.perf_counter()
                _, n = await rebuild(store, stream)
                latencies.append(time.perf_counter() - t0)
                games += 1
                events += n

        await asyncio.gather(*(worker(queue) for _ in range(concurrency)))
        if time.perf_counter() - start >= seconds:
            break
    elapsed = time.perf_counter() - start
    return {
        "concurrency": concurrency,
        "games": games,
        "seconds": round(elapsed, 3),
        "games_per_s": round(games / elapsed, 1),
        "events_per_s": round(events / elapsed, 1),
        "latency_ms": latency_ms(latencies),
    }


# --- 3. HTTP ----------------------------------------------------------------------------------


@dataclass
class LoadResult:
    seconds: float = 0.0
    ops: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    games: int = 0
    ready: int = 0  # workers done with set-up

    def summary(self) -> dict[str, Any]:
        return {
            "ops": self.ops,
            "seconds": round(self.seconds, 3),
            "per_s": round(self.ops / self.seconds, 1) if self.seconds else 0.0,
            "latency_ms": latency_ms(self.latencies),
            "errors": len(self.errors),
            "first_errors": self.errors[:5],
        }


class Server:
    """``python -m service run`` as a subprocess, its output in a temporary log file."""

    def __init__(self, database_url: str) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = Path(tempfile.mkstemp(prefix="swarm-bench-server-", suffix=".log")[1])
        # The load generator's people move as fast as they can: measure throughput, not the
        # rate limit (SWARM_RATE_LIMIT, docs/scaling.md), and every guest comes from one
        # address: no per-address sign-up limits either.
        env = dict(
            os.environ,
            DATABASE_URL=database_url,
            SWARM_RATE_LIMIT="0",
            SWARM_GUESTS_PER_HOUR="0",
            SWARM_ACCOUNTS_PER_HOUR="0",
        )
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "service", "run", "--port", str(self.port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    async def wait_healthy(self, timeout: float = 60.0) -> float:
        start = time.perf_counter()
        async with httpx.AsyncClient(base_url=self.base_url, timeout=2.0) as client:
            while time.perf_counter() - start < timeout:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited early:\n{self.tail()}")
                try:
                    if (await client.get("/health")).status_code == 200:
                        return time.perf_counter() - start
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
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

    def cpu_seconds(self) -> float | None:
        """User + system CPU the server process has used so far (Linux only)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def problems(self) -> list[str]:
        """Log lines that look like errors (tracebacks, ERROR/exception, 5xx)."""
        found: list[str] = []
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            low = line.lower()
            if (
                "traceback" in low
                or "error" in low
                or "exception" in low
                or "status_code=5" in low
                or '" 5' in line
            ):
                found.append(line.strip())
        return found


def _root_cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return repr(exc)


async def _setup_player(client: httpx.AsyncClient) -> dict[str, Any]:
    """A guest and a solo table; retried a few times on transport errors."""
    for attempt in range(5):
        try:
            guest = await client.post("/guests", json={"name": "Bench"})
            guest.raise_for_status()
            client.headers["Authorization"] = f"Bearer {guest.json()['token']}"
            table = await client.post("/solo-tables", json={"players": SOLO_PLAYERS})
            table.raise_for_status()
            body: dict[str, Any] = table.json()
            return body
        except httpx.TransportError as exc:
            say(f"set-up attempt {attempt + 1} failed: {_root_cause(exc)}")
            await asyncio.sleep(0.5)
    raise RuntimeError("could not set up a solo table")


async def solo_player(
    base_url: str, start: asyncio.Event, stop_at: list[float], result: LoadResult
) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=30.0) as client:
        table = await _setup_player(client)
        view: dict[str, Any] = table["game"]
        result.ready += 1
        await start.wait()
        while time.perf_counter() < stop_at[0]:
            game_id = view["game_id"]
            try:
                if view["phase"] == "ended":
                    result.games += 1
                    again = await client.post(f"/tables/{table['table_id']}/games")
                    if again.status_code != 201:
                        result.errors.append(f"playAgain {again.status_code}: {again.text[:200]}")
                        return
                    view = again.json()["game"]
                    continue
                if view["phase"] == "choosing" and view["choice"] and view["choice"]["yours"]:
                    move = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
                elif view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
                    move = {"type": "confirm", "bee": view["hand"][0]}
                else:  # not ours to act (should not happen in solo play): look again
                    view = (await client.get(f"/games/{game_id}")).json()
                    continue
                move["move_id"] = uuid.uuid4().hex
                t0 = time.perf_counter()
                response = await client.post(f"/games/{game_id}/moves", json=move)
                elapsed = time.perf_counter() - t0
                if response.status_code != 200:
                    result.errors.append(
                        f"submitMove {response.status_code}: {response.text[:200]}"
                    )
                    view = (await client.get(f"/games/{game_id}")).json()
                    continue
                result.latencies.append(elapsed)
                result.ops += 1
                view = response.json()
            except httpx.TransportError as exc:
                result.errors.append(f"transport: {_root_cause(exc)}")
                await asyncio.sleep(0.1)


async def run_load(
    workers: Callable[[asyncio.Event, list[float], LoadResult], list[Awaitable[None]]],
    seconds: float,
) -> LoadResult:
    """Start the workers, let them set up, then open the gate for ``seconds``."""
    result = LoadResult()
    start = asyncio.Event()
    stop_at = [float("inf")]
    tasks = [asyncio.ensure_future(w) for w in workers(start, stop_at, result)]
    # Let set-up (guest, table, connections) finish before the clock starts.
    ready_deadline = time.perf_counter() + 60
    while result.ready < len(tasks) and time.perf_counter() < ready_deadline:
        if any(t.done() for t in tasks):  # a worker failed during set-up
            await asyncio.gather(*tasks)
        await asyncio.sleep(0.05)
    t0 = time.perf_counter()
    stop_at[0] = t0 + seconds
    start.set()
    await asyncio.gather(*tasks)
    result.seconds = time.perf_counter() - t0
    return result


async def bench_http(base_url: str, clients: int, seconds: float) -> LoadResult:
    def workers(start: asyncio.Event, stop_at: list[float], result: LoadResult) -> list[Any]:
        return [solo_player(base_url, start, stop_at, result) for _ in range(clients)]

    return await run_load(workers, seconds)


# --- 4. INSERT baseline -----------------------------------------------------------------------

# About the size of a typical stored event.
_PAYLOAD = json.dumps({"type": "pick_confirmed", "seat": 3, "bee": 27, "at": None})


async def bench_insert(url: str, clients: int, seconds: float) -> LoadResult:
    conns: list[asyncpg.Connection[asyncpg.Record]] = [
        await asyncpg.connect(url) for _ in range(clients)
    ]
    try:

        async def one(
            conn: asyncpg.Connection[asyncpg.Record],
            start: asyncio.Event,
            stop_at: list[float],
            result: LoadResult,
        ) -> None:
            result.ready += 1
            await start.wait()
            while time.perf_counter() < stop_at[0]:
                t0 = time.perf_counter()
                await conn.execute(
                    "insert into bench_insert (payload) values ($1::jsonb)", _PAYLOAD
                )
                result.latencies.append(time.perf_counter() - t0)
                result.ops += 1

        def workers(start: asyncio.Event, stop_at: list[float], result: LoadResult) -> list[Any]:
            return [one(c, start, stop_at, result) for c in conns]

        return await run_load(workers, seconds)
    finally:
        for conn in conns:
            await conn.close()


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


async def bench_database(
    url: str, settings: Settings, results: dict[str, Any], profile_dir: Path | None = None
) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("create table bench_insert (id bigserial primary key, payload jsonb)")

    pool: Pool = await open_pool(url, min_size=1, max_size=max(2, settings.clients))
    try:
        store = EventStore(pool)
        say(f"storing {settings.rebuild_games} games…")
        t0 = time.perf_counter()
        finals = await store_games(store, settings.rebuild_games)
        store_s = time.perf_counter() - t0
        results["store"] = {
            "games": len(finals),
            "seconds": round(store_s, 3),
            "appends_per_s": round(len(finals) / store_s, 1),
        }
        say("rebuilding…")
        results["rebuild"] = [
            await bench_rebuild(store, finals, settings.rebuild_seconds, 1),
            await bench_rebuild(store, finals, settings.rebuild_seconds, settings.clients),
        ]
    finally:
        await pool.close()

    say("starting the service…")
    server = Server(url)
    try:
        startup = await server.wait_healthy()
        results["server_startup_s"] = round(startup, 2)
        say(f"INSERT baseline ({settings.clients} clients, {settings.load_seconds} s)…")
        before = await bench_insert(url, settings.clients, settings.load_seconds)
        say(f"HTTP solo moves ({settings.clients} clients, {settings.load_seconds} s)…")
        server_cpu0, client_cpu0 = server.cpu_seconds(), time.process_time()
        http = await bench_http(server.base_url, settings.clients, settings.load_seconds)
        server_cpu1, client_cpu1 = server.cpu_seconds(), time.process_time()
        say("INSERT baseline again…")
        after = await bench_insert(url, settings.clients, settings.load_seconds)
        # The clock runs first: games left over by a saturated online run would disturb them.
        results["clock"] = []
        for games in settings.clock_games:
            say(f"clock: {games} idle games with 1 s turns…")
            results["clock"].append(await loadgen.clock_run(server.base_url, url, games))
        online = []
        for games in settings.online_games:
            say(f"online: {games} concurrent games, {settings.online_seconds} s…")
            raw = profile_dir / f"profile-{games}.txt" if profile_dir and games > 1 else None
            run = await loadgen.online_run(
                server.base_url,
                server.process.pid,
                games,
                settings.online_seconds,
                profile=raw,
            )
            if raw is not None and raw.exists():
                run["profile"] = loadgen.summarise_profile(raw)
            online.append(run)
        results["online"] = online
        say("audit of an 8-seat export…")
        results["audit"] = await loadgen.audit_run(server.base_url)
    finally:
        code = server.stop()
    insert_rate = (before.ops + after.ops) / (before.seconds + after.seconds)
    http_summary = http.summary()
    http_summary["games_finished"] = http.games
    # Where the 2 cores went during the HTTP run (set-up included): the load generator shares
    # the machine with the server and PostgreSQL.
    if server_cpu0 is not None and server_cpu1 is not None:
        http_summary["server_cpu_s"] = round(server_cpu1 - server_cpu0, 2)
    http_summary["client_cpu_s"] = round(client_cpu1 - client_cpu0, 2)
    results["http"] = http_summary
    results["insert"] = {
        "before": before.summary(),
        "after": after.summary(),
        "mean_per_s": round(insert_rate, 1),
        "latency_ms": latency_ms(before.latencies + after.latencies),
    }
    results["ratio_http_moves_to_insert_commits"] = round(
        (http.ops / http.seconds) / insert_rate, 4
    )
    for run in results.get("online", []):
        run["fraction_of_insert_commits"] = round(run["moves_per_s"] / insert_rate, 4)
    problems = server.problems()
    # uvicorn shuts down gracefully on SIGTERM, then re-raises it: -15 is a clean stop.
    clean = code in (0, -signal.SIGTERM) and "Finished server process" in server.tail(5)
    results["server"] = {
        "exit_code": code,
        "clean_shutdown": clean,
        "log_problem_lines": len(problems),
        "first_problems": problems[:10],
        "log": str(server.log) if problems or not clean else None,
    }
    if not problems and clean:
        server.log.unlink(missing_ok=True)


def print_table(results: dict[str, Any]) -> None:
    m = results["machine"]
    settings = results["settings"]
    print()
    print(
        f"Machine: {m['cores']} cores, Python {m['python']}, PostgreSQL {m['postgresql']} "
        f"({', '.join(f'{k}={v}' for k, v in m['postgresql_settings'].items())})"
    )
    print(f"Mode: {'quick' if settings['quick'] else 'full'}, K={settings['clients']} clients")
    print()
    rows: list[tuple[str, str, str]] = []
    for e in results["engine"]:
        rows.append(
            (
                f"engine, {e['players']} players",
                f"{e['games_per_s']:.1f} games/s",
                f"{e['events_per_s']:.0f} events/s ({e['events_per_game']} events/game)",
            )
        )
    s = results["store"]
    rows.append(("store (append a game)", f"{s['appends_per_s']:.1f} games/s", ""))
    for r in results["rebuild"]:
        lat = r["latency_ms"]
        rows.append(
            (
                f"rebuild cold, {r['concurrency']} at once",
                f"{r['games_per_s']:.1f} games/s",
                f"{r['events_per_s']:.0f} events/s; p50 {lat['p50']} ms, p99 {lat['p99']} ms",
            )
        )
    ins = results["insert"]
    lat = ins["latency_ms"]
    rows.append(
        (
            "INSERT commit (baseline)",
            f"{ins['mean_per_s']:.1f} /s",
            f"before {ins['before']['per_s']}/s, after {ins['after']['per_s']}/s; "
            f"p50 {lat['p50']} ms, p99 {lat['p99']} ms",
        )
    )
    h = results["http"]
    lat = h["latency_ms"]
    rows.append(
        (
            "HTTP submitMove",
            f"{h['per_s']:.1f} moves/s",
            f"p50 {lat['p50']} ms, p95 {lat['p95']} ms, p99 {lat['p99']} ms; "
            f"{h['games_finished']} games, {h['errors']} errors",
        )
    )
    if "server_cpu_s" in h:
        rows.append(
            (
                "  CPU during HTTP run",
                "",
                f"server {h['server_cpu_s']} s, bench client {h['client_cpu_s']} s "
                f"(of {h['seconds']:.1f} s wall, {m['cores']} cores)",
            )
        )
    for o in results.get("online", []):
        lat = o["submit_move_ms"]
        rows.append(
            (
                f"online, {o['games']} games",
                f"{o['moves_per_s']:.1f} moves/s",
                f"submitMove p50 {lat['p50']} p95 {lat['p95']} p99 {lat['p99']} ms; "
                f"{o.get('fraction_of_insert_commits', 0):.3f} of INSERT/s; "
                f"SSE p50 {o['sse_ms']['p50']} p99 {o['sse_ms']['p99']} ms, gaps {o['sse_gaps']}; "
                f"RSS {o['rss_kib_per_game']} KiB/game; errors {sum(o['errors'].values())}; "
                f"CPU s service {o['cpu_s']['service']} loadgen {o['cpu_s']['loadgen']} "
                f"rest {o['cpu_s']['rest']} of {o['cpu_s']['of']}",
            )
        )
    for c in results.get("clock", []):
        late = c["late_ms"]
        rows.append(
            (
                f"clock, {c['games']} idle games",
                f"{c['expiries']} expiries",
                f"late p50 {late['p50']} p99 {late['p99']} max {late['max']} ms; "
                f"revealed twice {c['turns_revealed_twice']}; ended {c['games_ended']}; "
                f"SSE p50 {c['sse_ms']['p50']} p99 {c['sse_ms']['p99']} ms",
            )
        )
    if "audit" in results:
        a = results["audit"]
        rows.append(
            (
                f"audit, {a['players']}-seat export",
                f"{a['audits_per_s']:.1f} audits/s",
                f"{a['events']} events, {a['export_bytes']} bytes; CLI {a['cli_s']} s "
                f"(exit {a['cli_exit_code']}); audit() {a['audit_fn_ms']} ms",
            )
        )
    width = max(len(r[0]) for r in rows)
    rate_width = max(len(r[1]) for r in rows)
    for name, rate, note in rows:
        print(f"  {name:<{width}}  {rate:>{rate_width}}  {note}")
    print()
    print(
        "  HTTP moves/s ÷ INSERT commits/s = "
        f"{results['ratio_http_moves_to_insert_commits']:.3f}   <- the figure that matters"
    )
    server = results["server"]
    if server["log"]:
        print(
            f"  server: {server['log_problem_lines']} suspicious log lines, exit code "
            f"{server['exit_code']}; see {server['log']}"
        )
    print(f"  total {results['total_seconds']:.1f} s; JSON in {RESULTS_FILE}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds each")
    parser.add_argument(
        "--games", help="concurrent online games per run, comma-separated (e.g. 1,10,100,1000)"
    )
    parser.add_argument("--clock-games", help="idle timed games per clock run (e.g. 20,200)")
    parser.add_argument("--seconds", type=float, help="measured window of each online run")
    parser.add_argument(
        "--profile", action="store_true", help="py-spy the service during online runs (>1 game)"
    )
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    if args.games:
        settings = replace(settings, online_games=tuple(int(g) for g in args.games.split(",")))
    if args.clock_games:
        settings = replace(settings, clock_games=tuple(int(g) for g in args.clock_games.split(",")))
    if args.seconds:
        settings = replace(settings, online_seconds=args.seconds)
    profile_dir = Path(tempfile.mkdtemp(prefix="swarm-profile-")) if args.profile else None
    started = time.perf_counter()

    server_url = provide_database_url(os.environ.get("DATABASE_URL"))
    name = f"swarm_bench_{uuid.uuid4().hex[:12]}"
    url = ensure_database(server_url, name)
    results: dict[str, Any] = {
        "machine": machine(url),
        "settings": {"quick": args.quick, **settings.__dict__},
        "database": name,
    }
    m = results["machine"]
    print(f"Machine: {m['cores']} cores, Python {m['python']}, PostgreSQL {m['postgresql']}")
    try:
        migrate(url)
        say("rules engine…")
        results["engine"] = [bench_engine(players, settings.engine_seconds) for players in (4, 8)]
        asyncio.run(bench_database(url, settings, results, profile_dir))
    finally:
        drop_database(server_url, name)
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    RESULTS_FILE.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
