"""Online load: many concurrent games of people and bees over real HTTP, the turn clock on.

Used by ``python -m tests.bench.bench`` (``make bench``); the service runs as its own process and
this module is the load generator in the bench's process. Each *game slot* is two people (two
guests, two bearer tokens) and two bee players at a 4-seat online table:

* the host opens the table, the second person joins, the host fills the other seats with bees
  (the game is dealt);
* each person follows the game's Server-Sent Events stream and, on every ``turn_started`` or
  ``stem_choice_required`` for them, reads their view (``GET /games/{id}``) and moves:
  ``confirm`` a bee of their hand, or ``take_stem`` the cheapest stem;
* when a game ends the host plays again at once, until the measured window closes; then both
  people leave the table (which ends the game), so no abandoned game lingers into the next run.

Measured: submitMove answers (2xx) inside the window and their latency; SSE delivery latency,
from an event's ``recorded_at`` (the start of the append transaction, so the figure includes
the append itself) to the moment a follower parsed it, for events recorded after the follower
connected; version gaps on the streams (must be 0); the service's RSS before and after set-up.

``clock_run``: games whose people only tap (never confirm), with 1-second turns, so the clock
confirms every turn; afterwards the database says how late each expiry fired (``recorded_at``
of the events an expiry produced minus the deadline named in its command id
``clock:<deadline>``), and whether any turn was revealed twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg

SEATS = 4
PEOPLE = 2


def percentile(samples: list[float], p: float) -> float:
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), round(p / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def ms(samples: list[float], *ps: float) -> dict[str, float]:
    return {f"p{p:g}": round(percentile(samples, p) * 1000, 1) for p in ps}


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU seconds all cores have spent busy so far (Linux /proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@dataclass
class Person:
    name: str
    token: str
    player_id: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Metrics:
    window: list[float] = field(default_factory=lambda: [float("inf"), float("inf")])
    moves: int = 0  # 2xx submitMove answers sent inside the window
    move_latencies: list[float] = field(default_factory=list)
    moves_total: int = 0
    sse_latencies: list[float] = field(default_factory=list)
    sse_events: int = 0
    sse_gaps: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    games_finished: int = 0
    ready: int = 0
    game_ids: list[str] = field(default_factory=list)

    def in_window(self, t: float) -> bool:
        return self.window[0] <= t < self.window[1]


class ApiError(Exception):
    pass


async def call(
    client: httpx.AsyncClient,
    method: str,
    path: str,
    person: Person | None,
    m: Metrics,
    *,
    json_body: Any = None,
    ok: tuple[int, ...] = (200, 201),
    tries: int = 8,
) -> Any:
    """One request, retried on 503, transport errors and concurrent changes (counted)."""
    headers = person.headers if person else None
    for attempt in range(tries):
        try:
            r = await client.request(method, path, json=json_body, headers=headers)
        except httpx.TransportError as exc:
            m.errors[f"transport {type(exc).__name__}"] += 1
            await asyncio.sleep(0.2 * (attempt + 1))
            continue
        if r.status_code in ok:
            return r.json()
        code = (
            r.json().get("code", "") if r.headers.get("content-type", "").endswith("json") else ""
        )
        m.errors[f"{method} {path.split('/')[1]} {r.status_code} {code}"] += 1
        if r.status_code in (503, 429) or code == "concurrent-change":
            await asyncio.sleep(float(r.headers.get("retry-after", "0.2")) * random.random())
            continue
        raise ApiError(f"{method} {path} -> {r.status_code} {r.text[:200]}")
    raise ApiError(f"{method} {path}: gave up after {tries} tries")


async def new_person(client: httpx.AsyncClient, name: str, m: Metrics) -> Person:
    body = await call(client, "POST", "/guests", None, m, json_body={"name": name})
    return Person(name=name, token=body["token"], player_id=body["player_id"])


async def open_game(
    client: httpx.AsyncClient, m: Metrics, turn_seconds: float, choice_seconds: float
) -> tuple[str, str, list[Person]]:
    """Two people and two bees at a 4-seat online table; returns (table id, game id, people)."""
    host = await new_person(client, "Host", m)
    other = await new_person(client, "Guest", m)
    table = await call(
        client,
        "POST",
        "/tables",
        host,
        m,
        json_body={
            "seats": SEATS,
            "stake": 0,
            "turn_seconds": turn_seconds,
            "choice_seconds": choice_seconds,
        },
    )
    table_id = table["table_id"]
    await call(client, "POST", f"/tables/{table_id}/seats", other, m)
    started = await call(client, "POST", f"/tables/{table_id}/bees", host, m)
    return table_id, started["game"]["game_id"], [host, other]


async def act(
    client: httpx.AsyncClient,
    person: Person,
    game_id: str,
    m: Metrics,
    rng: random.Random,
    *,
    tap_only: bool = False,
) -> None:
    """Read my view; if the game waits for me, move (retrying refusals that a newer state
    explains: the view is re-read)."""
    for _ in range(3):
        view = await call(client, "GET", f"/games/{game_id}", person, m)
        if tap_only:  # leave the confirming to the clock (a tapped turn is not idle)
            if view["phase"] != "picking" or view["tapped"] is not None or not view["hand"]:
                return
            move: dict[str, Any] = {"type": "tap", "bee": rng.choice(view["hand"])}
        elif view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
            move = {"type": "confirm", "bee": rng.choice(view["hand"])}
        elif view["phase"] == "choosing" and view["choice"] and view["choice"]["yours"]:
            move = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
        else:
            return
        move["move_id"] = uuid.uuid4().hex
        t0 = time.perf_counter()
        try:
            r = await client.post(f"/games/{game_id}/moves", json=move, headers=person.headers)
        except httpx.TransportError as exc:
            m.errors[f"move transport {type(exc).__name__}"] += 1
            continue
        elapsed = time.perf_counter() - t0
        if r.status_code == 200:
            m.moves_total += 1
            if m.in_window(t0):
                m.moves += 1
                m.move_latencies.append(elapsed)
            return
        code = r.json().get("code", "") if r.content else ""
        m.errors[f"move {r.status_code} {code}"] += 1
        if r.status_code >= 500:
            await asyncio.sleep(0.2)


async def follow(
    client: httpx.AsyncClient,
    person: Person,
    game_id: str,
    m: Metrics,
    rng: random.Random,
    *,
    moves: bool,
    stop_at: list[float],
    tap_only: bool = False,
) -> bool:
    """Follow the game's stream to its end (True), acting on it when `moves`; returns False
    when the window closed first (a player acting stops at the first event after it)."""
    seen = 0
    connected = datetime.now(UTC)
    me = None
    async with client.stream(
        "GET", f"/games/{game_id}/stream", headers=person.headers, timeout=httpx.Timeout(None)
    ) as response:
        if response.status_code != 200:
            m.errors[f"stream {response.status_code}"] += 1
            return False
        fields: dict[str, str] = {}
        async for line in response.aiter_lines():
            if line.startswith(":"):
                continue
            if line:
                key, _, value = line.partition(":")
                fields[key] = value[1:] if value.startswith(" ") else value
                continue
            if "data" not in fields:
                fields = {}
                continue
            received = datetime.now(UTC)
            version = int(fields.get("id", "0"))
            kind = fields.get("event", "")
            data = json.loads(fields["data"])
            fields = {}
            if version != seen + 1:
                m.sse_gaps += 1
            seen = version
            m.sse_events += 1
            recorded = datetime.fromisoformat(data["recorded_at"])
            if recorded > connected:
                m.sse_latencies.append((received - recorded).total_seconds())
            if kind == "game_ended":
                return True
            if kind == "game_started" and me is None:
                me = next(
                    (
                        s["seat"]
                        for s in data["data"]["seats"]
                        if s.get("player_id") == person.player_id
                    ),
                    None,
                )
            if moves and time.perf_counter() >= stop_at[0]:
                return False
            if tap_only and kind == "turn_started":
                await act(client, person, game_id, m, rng, tap_only=True)
            elif moves and (
                kind == "turn_started"
                or (kind == "stem_choice_required" and data["data"].get("seat") == me)
            ):
                await act(client, person, game_id, m, rng)
    return False


async def game_slot(
    client: httpx.AsyncClient,
    m: Metrics,
    gate: asyncio.Event,
    stop_at: list[float],
    turn_seconds: float,
    choice_seconds: float,
    seed: int,
) -> None:
    rng = random.Random(seed)
    table_id, game_id, people = await open_game(client, m, turn_seconds, choice_seconds)
    m.game_ids.append(game_id)
    m.ready += 1
    await gate.wait()
    while True:
        # Past the window, a follower may wait for a move its partner will no longer make:
        # give the game half a second more, then stop following.
        remaining = max(stop_at[0] - time.perf_counter(), 0.0) + 0.5
        try:
            ends = await asyncio.wait_for(
                asyncio.gather(
                    *(
                        follow(client, p, game_id, m, rng, moves=True, stop_at=stop_at)
                        for p in people
                    )
                ),
                timeout=remaining,
            )
        except TimeoutError:
            break
        if not all(ends):
            break
        m.games_finished += 1
        if time.perf_counter() >= stop_at[0]:
            break
        again = await call(client, "POST", f"/tables/{table_id}/games", people[0], m)
        game_id = again["game"]["game_id"]
        m.game_ids.append(game_id)
    # Leave (ends a running game: last person standing, then the table closes).
    for p in people:
        try:
            await call(client, "POST", f"/tables/{table_id}/leave", p, m, ok=(200, 201, 409))
        except ApiError as exc:
            m.errors[f"leave {exc}"[:60]] += 1


def client_for(base_url: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=base_url,
        timeout=httpx.Timeout(60.0),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
    )


async def online_run(
    base_url: str,
    server_pid: int,
    games: int,
    seconds: float,
    *,
    turn_seconds: float = 30.0,
    choice_seconds: float = 15.0,
    profile: Path | None = None,
) -> dict[str, Any]:
    """`games` concurrent online games played flat out for `seconds`, the clock on."""
    m = Metrics()
    gate = asyncio.Event()
    stop_at = [float("inf")]
    rss_before = rss_kib(server_pid)
    async with client_for(base_url) as client:
        t_setup = time.perf_counter()
        tasks = [
            asyncio.ensure_future(
                game_slot(client, m, gate, stop_at, turn_seconds, choice_seconds, seed=i)
            )
            for i in range(games)
        ]
        while m.ready < games:
            if any(t.done() for t in tasks):
                await asyncio.gather(*tasks)  # raises a set-up failure
            await asyncio.sleep(0.05)
        setup_s = time.perf_counter() - t_setup
        rss_ready = rss_kib(server_pid)
        spy = None
        if profile is not None:
            spy = subprocess.Popen(
                [
                    str(Path(sys.executable).with_name("py-spy")),
                    "record",
                    "--pid",
                    str(server_pid),
                    "--duration",
                    str(int(seconds)),
                    "--rate",
                    "200",
                    "--format",
                    "raw",
                    "--output",
                    str(profile),
                    "--nonblocking",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        cpu0 = (cpu_seconds(server_pid), time.process_time(), machine_busy_seconds())
        t0 = time.perf_counter()
        m.window = [t0, t0 + seconds]
        stop_at[0] = t0 + seconds
        gate.set()
        await asyncio.sleep(seconds / 2)
        rss_playing = rss_kib(server_pid)
        await asyncio.sleep(seconds / 2)
        cpu1 = (cpu_seconds(server_pid), time.process_time(), machine_busy_seconds())
        await asyncio.gather(*tasks)
        wall = time.perf_counter() - t0
        if spy is not None:
            spy.wait(timeout=seconds + 30)
    return {
        "games": games,
        "setup_s": round(setup_s, 1),
        "window_s": seconds,
        "wall_s": round(wall, 1),
        "moves": m.moves,
        "moves_per_s": round(m.moves / seconds, 1),
        "submit_move_ms": ms(m.move_latencies, 50, 95, 99),
        "games_finished": m.games_finished,
        "sse_events": m.sse_events,
        "sse_ms": ms(m.sse_latencies, 50, 99),
        "sse_gaps": m.sse_gaps,
        "errors": dict(m.errors.most_common(8)),
        "rss_kib": {"before": rss_before, "ready": rss_ready, "playing": rss_playing},
        "rss_kib_per_game": round((rss_playing - rss_before) / games, 1),
        # Where the cores went during the window: the service, this load generator, and the
        # rest (PostgreSQL, mostly).
        "cpu_s": {
            "service": round(cpu1[0] - cpu0[0], 1),
            "loadgen": round(cpu1[1] - cpu0[1], 1),
            "rest": round((cpu1[2] - cpu0[2]) - (cpu1[0] - cpu0[0]) - (cpu1[1] - cpu0[1]), 1),
            "of": round(seconds * (os.cpu_count() or 1), 1),
        },
    }


def clock_log(conn: psycopg.Connection[Any], streams: list[str]) -> tuple[list[float], int]:
    """From the log of these game streams: how late (seconds) each turn clock fired after its
    deadline, and how many turns were revealed more than once (never, if the clock fires once)."""
    fired = conn.execute(
        """
        select metadata->>'command_id', min(recorded_at)
          from events
         where stream = any(%s) and metadata->>'causation' = 'expire_clock'
         group by stream, 1
        """,
        (streams,),
    ).fetchall()
    twice = conn.execute(
        """
        select count(*) from (
          select stream, data->>'turn' from events
           where stream = any(%s) and type = 'picks_revealed'
           group by 1, 2 having count(*) > 1) t
        """,
        (streams,),
    ).fetchone()
    late = [
        (at - datetime.fromisoformat(cmd.removeprefix("clock:"))).total_seconds()
        for cmd, at in fired
        if cmd and cmd.startswith("clock:")
    ]
    return late, twice[0] if twice else 0


async def clock_run(
    base_url: str, database_url: str, games: int, *, turn_seconds: float = 1.0
) -> dict[str, Any]:
    """`games` timed games whose people only tap: the clock confirms every turn. Waits for all
    to end, then measures each expiry's lateness from the log."""
    m = Metrics()
    never = [float("inf")]
    async with client_for(base_url) as client:
        t0 = time.perf_counter()
        opened = await asyncio.gather(
            *(open_game(client, m, turn_seconds, turn_seconds) for _ in range(games))
        )
        game_ids = [g for _, g, _ in opened]
        setup = time.perf_counter() - t0
        # Every person follows the stream and taps a bee each turn, never confirming: the
        # clock confirms the tapped bees (a tapped turn is not idle, so the game is not
        # abandoned) and takes the cheapest stem when a bee is too low.
        ends = await asyncio.gather(
            *(
                follow(
                    client, p, gid, m, random.Random(i), moves=False, stop_at=never, tap_only=True
                )
                for i, (_, gid, people) in enumerate(opened)
                for p in people
            )
        )
        wall = time.perf_counter() - t0
    streams = [f"game-{g}" for g in game_ids]
    with psycopg.connect(database_url) as conn:
        late, twice = clock_log(conn, streams)
        ended = conn.execute(
            "select count(*) from events where stream = any(%s) and type = 'game_ended'",
            (streams,),
        ).fetchone()
    return {
        "games": games,
        "turn_seconds": turn_seconds,
        "setup_s": round(setup, 1),
        "wall_s": round(wall, 1),
        "games_ended": ended[0] if ended else 0,
        "followers_saw_end": sum(ends),
        "taps": m.moves_total,
        "expiries": len(late),
        "late_ms": ms(late, 50, 99) | {"max": round(max(late, default=0) * 1000, 1)},
        "turns_revealed_twice": twice,
        "sse_ms": ms(m.sse_latencies, 50, 99),
        "sse_gaps": m.sse_gaps,
        "errors": dict(m.errors.most_common(8)),
    }


async def audit_run(base_url: str, players: int = 8, rounds: int = 20) -> dict[str, Any]:
    """Play an 8-seat solo game to its end, export it, and time the offline audit on the file:
    ``python -m service audit FILE`` as a process (interpreter start included), and the
    ``audit()`` function in this process."""
    m = Metrics()
    async with client_for(base_url) as client:
        me = await new_person(client, "Auditor", m)
        table = await call(client, "POST", "/solo-tables", me, m, json_body={"players": players})
        view = table["game"]
        gid = view["game_id"]
        while view["phase"] != "ended":
            if view["phase"] == "choosing":
                move = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
            else:
                move = {"type": "confirm", "bee": view["hand"][0]}
            move["move_id"] = uuid.uuid4().hex
            view = await call(client, "POST", f"/games/{gid}/moves", me, m, json_body=move)
        export = await call(client, "GET", f"/games/{gid}/export", me, m)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(export, f)
        path = f.name
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "service", "audit", path], capture_output=True, text=True
    )
    cli_s = time.perf_counter() - t0
    from service.domain.audit import audit

    t0 = time.perf_counter()
    for _ in range(rounds):
        report = audit(export)
    fn_s = (time.perf_counter() - t0) / rounds
    Path(path).unlink(missing_ok=True)
    return {
        "players": players,
        "events": len(export["events"]),
        "export_bytes": len(json.dumps(export)),
        "cli_exit_code": proc.returncode,
        "cli_s": round(cli_s, 2),
        "audit_fn_ms": round(fn_s * 1000, 1),
        "audits_per_s": round(1 / fn_s, 1),
        "ok": bool(getattr(report, "ok", False)),
    }


def summarise_profile(raw: Path, top: int = 15) -> dict[str, Any]:
    """py-spy's raw (collapsed) stacks → the functions with the most samples, inclusive and
    self, and the share of samples in a few areas of interest."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        for frame in set(frames):
            inclusive[_short(frame)] += n
        own[_short(frames[-1])] += n
    if not total:
        return {"samples": 0}

    def share(c: Counter[str]) -> list[tuple[str, float]]:
        return [(f, round(100 * n / total, 1)) for f, n in c.most_common(top)]

    return {"samples": total, "inclusive_pct": share(inclusive), "self_pct": share(own)}


def _short(frame: str) -> str:
    # "func (path/to/module.py:123)" → "func (module.py)"
    name, _, where = frame.partition(" (")
    file = where.rsplit(":", 1)[0].rsplit("/", 1)[-1]
    return f"{name} ({file})" if file else name
