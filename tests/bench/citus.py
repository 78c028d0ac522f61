"""The store on a Citus cluster against plain PostgreSQL, in one run:
``python -m tests.bench.citus [--quick]`` (``make bench-citus``; docs/scaling.md, "The store on
Citus", and docs/benchmarks.md).

The cluster is deploy/citus-cluster.sh's (a coordinator and two workers, each in a network
namespace of its own when run as root; ``make bench-citus`` starts it). The baseline is a plain
PostgreSQL 15 server this run starts itself (the same binaries and settings as the nodes, without
Citus, on 127.0.0.1), or ``--plain-url``. Four databases, each fresh and migrated by
``swarm migrate``, dropped afterwards:

* **plain**: on the plain server;
* **one worker**: on the cluster, with only worker 1 in it (its 8 shards all on worker 1);
* **two workers**: on the cluster, with both workers (4 shards each). Both Citus databases are
  served by the same three PostgreSQL processes, so the two are measured side by side;
* and, on the two-worker database, three ways of appending that say where the time goes:
  **0018's append** (`append_to_shard` as migration 0018 wrote it, its events by one INSERT ...
  SELECT, made beside the migrated one: what 0022 changed), **without the token check** (the
  append alone: on Citus the check is a query of its own), and **straight to the shard's
  worker** (each writer's pool on the worker holding its game's shard: Citus answers a query on
  any node, so this is the append without the coordinator's hop).

**Appends** (the first part): ``--clients`` writers, each appending the moves of real 4-seat bee
games (played by the engine beforehand, each move's events as the service encodes them) to a
game of its own, through `EventStore.append` as a move does: the move's events, its command id,
the token check (`TokenGuard`, a token issued beforehand), a timer row when a turn starts, the
deal's secret with a game's first append. A game that ends is followed by a fresh one (its id
drawn beside its table's, `EventStore.colocated_id`). Slices of ``--seconds`` per mode, the order
turning each round, and a slice of one writer (the unloaded latency). Per slice: appends a
second, p50 / p99 of an append; the CPU each process group spent per append and the cores it
used (from /proc: the bench process; each PostgreSQL node, its postmaster and every child, the
children it has reaped included; everything else on the machine, other people's work too); WAL
bytes per append on each node (pg_stat_wal: a coordinator that writes none runs no two-phase
commit); and Citus' own count of its executions (`citus_stat_counters`: single-shard, i.e.
router, and multi-shard, and connections opened) on the node the writers talk to.

**Moves over HTTP** (the second part): two service processes (``python -m service run``), one on
the plain database, one on the two-worker database; the same client (tests/bench/bench.py's
`SoloClient`: solo tables of the caller and three bees, a move as soon as the last is answered)
at 1 and at ``--http-clients`` clients, interleaved: p50 and p99 of a move on each, and their
ratio, per round.

Every figure is the median (min–max) over the rounds; ratios are taken within a round.
Results are printed and written to ``bench-citus.json`` (``--report FILE`` prints a kept one),
with the CPU 100,000 online games would need on each kind of node, on paper (`on_paper`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from service.domain import chain
from service.domain.codec import encode_canonical
from service.domain.rules import engine
from service.domain.rules.bees import bee_commands
from service.domain.rules.commands import StartGame
from service.domain.rules.engine import initial_state
from service.domain.rules.events import StemChoiceRequired, TurnStarted, event_type
from service.domain.rules.simulate import bee_seats, shuffled_deck
from service.store import citus as store_citus
from service.store.credentials import StoredAccessTokens
from service.store.database import drop_database, ensure_database
from service.store.events import EventStore
from service.store.log import NewEvent, StreamAppend
from service.store.migrate import migrate
from service.store.pool import Pool, open_pool
from service.store.rows import AccessToken, DealSecret, Row, Timer, TokenGuard
from tests.bench import loadgen
from tests.bench.bench import (
    Load,
    RawHttp,
    Server,
    SoloClient,
    free_port,
    percentile,
    say,
    spread,
    timed,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "citus-cluster.sh"
PGBIN = Path(os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin"))
RESULTS_FILE = Path("bench-citus.json")

PLAIN, ONE, TWO, OLD = "plain", "one", "two", "two_0018"
BARE, DIRECT = "two_unchecked", "two_direct"
MODES = (PLAIN, ONE, TWO, OLD, BARE, DIRECT)
LABELS = {
    PLAIN: "plain PostgreSQL",
    ONE: "Citus, one worker",
    TWO: "Citus, two workers",
    OLD: "Citus, two workers, 0018's append (INSERT ... SELECT)",
    BARE: "Citus, two workers, no token check",
    DIRECT: "Citus, two workers, straight to the shard's worker",
}
# The games' ids in the precomputed events, replaced by each game's own (the same length, so
# the canonical JSON stays canonical).
_GAME = "00000000-0000-4000-8000-0000000000aa"
_TABLE = "00000000-0000-4000-8000-0000000000bb"
_SEED = bytes(range(32))
_COUNTERS = """
select coalesce(sum(query_execution_single_shard), 0)::bigint,
       coalesce(sum(query_execution_multi_shard), 0)::bigint,
       coalesce(sum(connection_establishment_succeeded), 0)::bigint
  from citus_stat_counters where name = current_database()
"""
_PLACEMENTS = """
select s.shardminvalue::integer, n.nodename, n.nodeport
  from pg_dist_shard s join pg_dist_placement p using (shardid) join pg_dist_node n using (groupid)
 where s.logicalrelid = 'events'::regclass order by 1
"""


@dataclass(frozen=True)
class Settings:
    rounds: int = 3
    seconds: float = 6.0
    latency_seconds: float = 2.0
    clients: int = 16
    http_clients: int = 8
    http_seconds: float = 6.0
    games: int = 12  # distinct precomputed games the writers cycle through


QUICK = Settings(
    rounds=1, seconds=2.0, latency_seconds=1.0, clients=8, http_clients=4, http_seconds=2.0
)


# --- the cluster and the plain server ------------------------------------------------------------


def cluster_dir() -> Path:
    return Path(os.environ.get("SWARM_CITUS_DIR", "/tmp/swarm-citus"))


def cluster(*args: str) -> str:
    """deploy/citus-cluster.sh ``args``; its output."""
    run = subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=300, check=False
    )
    if run.returncode != 0:
        raise RuntimeError(f"citus-cluster.sh {' '.join(args)}: {run.stderr}")
    return run.stdout.strip()


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class PlainPostgres:
    """A PostgreSQL 15 server of this run, the cluster's nodes' settings without Citus, at the
    scheduling priority (nice) of the node ``like``: a bench run under ``nice`` would otherwise
    give the plain server less of the machine than the cluster's nodes."""

    def __init__(self, like: int) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="swarm-bench-plain-"))
        self.port = free_port()
        data = self.dir / "data"
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            shutil.chown(self.dir, "postgres")
        subprocess.run(
            _as_postgres(
                [
                    str(PGBIN / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                ]
            ),
            check=True,
            capture_output=True,
        )
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.dir}'\nmax_connections = 300\n"
                "shared_buffers = 128MB\nwal_level = logical\nmax_replication_slots = 16\n"
                "max_wal_senders = 16\nlog_min_messages = warning\n"
            )
        subprocess.run(
            _as_postgres(
                [str(PGBIN / "pg_ctl"), "-D", str(data), "-l", str(self.dir / "log"), "-w", "start"]
            ),
            check=True,
            capture_output=True,
            preexec_fn=lambda: os.setpriority(os.PRIO_PROCESS, 0, niceness(like)),
        )
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def pid(self) -> int:
        return int((self.dir / "data" / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        subprocess.run(
            _as_postgres(
                [str(PGBIN / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "stop"]
            ),
            check=False,
            capture_output=True,
        )
        shutil.rmtree(self.dir, ignore_errors=True)


def niceness(pid: int) -> int:
    return int(_stat(pid)[16])


@dataclass(frozen=True)
class Node:
    """A PostgreSQL server whose CPU is counted: its postmaster and address."""

    name: str
    pid: int
    host: str
    port: int


def cluster_nodes() -> list[Node]:
    """The cluster's running nodes, from their postmaster.pid (pid, port, listen address)."""
    nodes = []
    for data in sorted(cluster_dir().glob("node*/data")):
        lines = (data / "postmaster.pid").read_text().splitlines()
        index = int(data.parent.name.removeprefix("node"))
        name = "coordinator" if index == 0 else f"worker {index}"
        nodes.append(Node(name, int(lines[0]), lines[5].strip() or "127.0.0.1", int(lines[3])))
    return nodes


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def tree_seconds(root: int) -> float:
    """CPU seconds of a postmaster and its children, living and reaped (their time is in the
    postmaster's cutime and cstime once it has waited for them)."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat(int(entry.name))
        except OSError:
            continue
        pid = int(entry.name)
        if pid == root or int(fields[1]) == root:
            total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def cpu_now(nodes: Sequence[Node]) -> dict[str, float]:
    """CPU seconds so far: this process, each node, the whole machine (busy)."""
    now = {"bench process": time.process_time()}
    for node in nodes:
        now[node.name] = tree_seconds(node.pid)
    now["machine"] = loadgen.machine_busy_seconds()
    return now


def wal_now(nodes: Sequence[Node]) -> dict[str, int]:
    out = {}
    for node in nodes:
        with psycopg.connect(
            f"postgresql://postgres@{node.host}:{node.port}/postgres", autocommit=True
        ) as conn:
            row = conn.execute("select wal_bytes::bigint from pg_stat_wal").fetchone()
            out[node.name] = int(row[0]) if row else 0
    return out


def counters_now(urls: Sequence[str]) -> tuple[int, int, int]:
    """Citus' single-shard and multi-shard executions and connections opened, over ``urls``."""
    single = multi = opened = 0
    for url in urls:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(_COUNTERS).fetchone()
            assert row is not None
            single, multi, opened = single + row[0], multi + row[1], opened + row[2]
    return single, multi, opened


# --- the writers ---------------------------------------------------------------------------------


Move = list[tuple[str, bytes, bool, bool]]  # (type, data, canonical, starts a clock) a move


def recorded_games(count: int) -> list[list[Move]]:
    """``count`` 4-seat bee games played by the engine, as each command's events encoded the
    way the service encodes them (`unit_of_work._new`), for the game ``_GAME`` of ``_TABLE``."""
    import random

    rng = random.Random(46)
    games = []
    for _ in range(count):
        start = StartGame(
            game_id=_GAME, table_id=_TABLE, seats=bee_seats(4), deck_order=shuffled_deck(4, rng)
        )
        state, events = engine.decide_and_evolve(start, initial_state)
        moves = [events]
        while state.phase != "ended":
            for command in bee_commands(state):
                state, events = engine.decide_and_evolve(command, state)
                moves.append(events)
        games.append(
            [
                [
                    (
                        event_type(e),
                        *encode_canonical(e),
                        isinstance(e, TurnStarted | StemChoiceRequired),
                    )
                    for e in move
                ]
                for move in moves
                if move
            ]
        )
    return games


@dataclass
class Writer:
    """One writer: a table of its own, a game of that table at a time, a person's token."""

    store: EventStore
    table_id: str
    player_id: str
    token_hash: bytes
    guarded: bool
    games: list[list[Move]]
    game: int = 0
    move: int = 0
    game_id: str = ""
    version: int = 0
    seal: dict[str, bytes] = field(default_factory=dict)

    async def next_game(self) -> None:
        self.game_id = await self.store.colocated_id(self.table_id)
        self.seal = {self.game_id: chain.seal_key(self.game_id, _SEED)}
        self.game, self.move, self.version = (self.game + 1) % len(self.games), 0, 0

    async def append(self) -> None:
        if not self.game_id or self.move >= len(self.games[self.game]):
            await self.next_game()
        events = self.games[self.game][self.move]
        game = self.game_id.encode()
        table = self.table_id.encode()
        batch = [
            NewEvent(type_, data.replace(_GAME.encode(), game).replace(_TABLE.encode(), table), c)
            for type_, data, c, _ in events
        ]
        now = datetime.now(UTC)
        also: list[Row] = []
        if self.move == 0:
            also.append(DealSecret(game_id=self.game_id, server_seed=_SEED))
        if any(clock for *_, clock in events):
            also.append(Timer(game_id=self.game_id, deadline=now + timedelta(seconds=20)))
        stream = f"game-{self.game_id}"
        await self.store.append(
            StreamAppend(stream, self.version, batch, seal_keys=self.seal),
            metadata={"by": self.player_id},
            command=(stream, uuid.uuid4().hex),
            also=also,
            guard=TokenGuard(token_hash=self.token_hash, player_id=self.player_id, at=now)
            if self.guarded
            else None,
        )
        self.version += len(batch)
        self.move += 1


@dataclass
class Target:
    """Where one mode's writers append, whose Citus counters count, and the statement of the
    append on Citus (`service.store.citus.APPEND`) in this mode."""

    mode: str
    writers: list[Writer]
    counter_urls: list[str]
    append: str = store_citus.APPEND


async def _writers(
    mode: str,
    pools: dict[tuple[str, int] | None, Pool],
    tokens_pool: Pool,
    count: int,
    games: list[list[Move]],
    shards: int = 0,
    placements: dict[int, tuple[str, int]] | None = None,
) -> list[Writer]:
    """``count`` writers, each with a token issued (through ``tokens_pool``: on Citus the tokens
    are on every node). On Citus the writers' tables are dealt over the shards in turn, so each
    worker gets its share of them; with ``placements`` (shard index → worker), writer i appends
    through the pool of the worker its table is on."""
    tokens = StoredAccessTokens(tokens_pool)
    stores = {key: EventStore(pool) for key, pool in pools.items()}
    keys = list(stores)
    layout = await store_citus.layout(next(iter(pools.values())))
    out = []
    for i in range(count):
        key = keys[i % len(keys)]
        table_id = str(uuid.uuid4())
        if shards:
            if placements:  # the i-th of this worker's shards, in turn
                mine = [n for n, where in sorted(placements.items()) if where == key]
                shard = mine[(i // len(keys)) % len(mine)]
            else:
                shard = i % shards
            while layout.shard(table_id) != shard:
                table_id = str(uuid.uuid4())
        player_id = str(uuid.uuid4())
        token_hash = os.urandom(32)
        await tokens.issue(
            AccessToken(
                token_hash=token_hash,
                player_id=player_id,
                name=f"Bench {i}",
                expires_at=datetime.now(UTC) + timedelta(days=1),
            )
        )
        out.append(
            Writer(stores[key], table_id, player_id, token_hash, mode != BARE, games, game=i)
        )
    return out


@dataclass
class Slice:
    appends: int
    seconds: float
    latencies: list[float]
    cpu: dict[str, float]
    wal: dict[str, int]
    counters: tuple[int, int, int]

    def figures(self) -> dict[str, float]:
        n = max(self.appends, 1)
        out = {
            "appends_per_s": self.appends / self.seconds,
            "p50_ms": 1000 * percentile(self.latencies, 50),
            "p99_ms": 1000 * percentile(self.latencies, 99),
        }
        groups = {k: v for k, v in self.cpu.items() if k != "machine"}
        for name, seconds in groups.items():
            out[f"cpu_ms_per_append {name}"] = 1000 * seconds / n
            out[f"cores {name}"] = seconds / self.seconds
        out["cores machine"] = self.cpu["machine"] / self.seconds
        out["cores other"] = (self.cpu["machine"] - sum(groups.values())) / self.seconds
        for name, wal in self.wal.items():
            out[f"wal_bytes_per_append {name}"] = wal / n
        single, multi, opened = self.counters
        out["single_shard"] = single
        out["multi_shard"] = multi
        out["connections_opened"] = opened
        return out


async def run_slice(target: Target, nodes: Sequence[Node], clients: int, seconds: float) -> Slice:
    writers = target.writers[:clients]
    latencies: list[float] = []
    count = [0]
    stop = 0.0

    async def write(writer: Writer) -> None:
        while time.perf_counter() < stop:
            started = time.perf_counter()
            await writer.append()
            latencies.append(time.perf_counter() - started)
            count[0] += 1

    counted = [n for n in nodes if n.name != "machine"]
    wal0 = await asyncio.to_thread(wal_now, counted)
    c0 = await asyncio.to_thread(counters_now, target.counter_urls)
    usual, store_citus.APPEND = store_citus.APPEND, target.append
    try:
        cpu0, wall0 = cpu_now(counted), time.perf_counter()
        stop = wall0 + seconds
        await asyncio.gather(*(write(w) for w in writers))
        cpu1, wall1 = cpu_now(counted), time.perf_counter()
    finally:
        store_citus.APPEND = usual
    c1 = await asyncio.to_thread(counters_now, target.counter_urls)
    wal1 = await asyncio.to_thread(wal_now, counted)
    return Slice(
        count[0],
        wall1 - wall0,
        latencies,
        {k: cpu1[k] - cpu0[k] for k in cpu0},
        {k: wal1[k] - wal0[k] for k in wal0},
        (c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2]),
    )


# --- the databases -------------------------------------------------------------------------------


@dataclass
class Databases:
    plain_base: str
    plain: str
    one: str
    two: str
    names: list[str]

    def drop(self) -> None:
        drop_database(self.plain_base, database_name(self.plain))
        for name in self.names:
            try:
                cluster("drop-database", name)
            except RuntimeError as exc:
                say(f"not dropped: {exc}")


def database_name(url: str) -> str:
    return url.rsplit("/", 1)[1].split("?")[0]


def create_databases(plain_base: str, coordinator_host: str) -> Databases:
    suffix = uuid.uuid4().hex[:8]
    plain = ensure_database(plain_base, f"swarm_bench_{suffix}")
    one_name, two_name = f"swb_one_{suffix}", f"swb_two_{suffix}"
    one = cluster("database", one_name)
    two = cluster("database", two_name)
    # The one-worker database: worker 2 taken out before its tables are distributed, so every
    # shard is placed on worker 1.
    with psycopg.connect(one, autocommit=True) as conn:
        workers = conn.execute(
            "select nodename, nodeport from pg_dist_node where groupid > 0 order by nodeid"
        ).fetchall()
        for host, port in workers[1:]:
            conn.execute("select citus_remove_node(%s, %s)", (host, port))
    # The two-worker database first: its migration creates the app role on every node (a role
    # is a node's, not a database's), which the one-worker database's would not reach.
    for url in (plain, two, one):
        migrate(url)
    return Databases(plain_base, plain, one, two, [one_name, two_name])


def with_0018_append(url: str) -> str:
    """0018's `append_to_shard` (its events by one INSERT ... SELECT, before 0022), made beside
    the migrated one in the database at ``url`` as `append_to_shard_0018`: the statement that
    calls it."""
    text = (ROOT / "migrations" / "0018_citus.sql").read_text()
    body = text[text.index("    create function append_to_shard(") :]
    body = body[: body.index("    perform create_distributed_function(")]
    body = body.replace("function append_to_shard(", "function append_to_shard_0018(")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(body.encode())
        conn.execute(
            "select create_distributed_function('append_to_shard_0018(text, jsonb)',"
            " distribution_arg_name => 'p_shard', colocate_with => 'events')"
        )
        conn.execute("grant execute on function append_to_shard_0018(text, jsonb) to swarm_app")
    return "select append_to_shard_0018($1, $2)"


# --- the HTTP part --------------------------------------------------------------------------------


async def http_slice(clients: list[SoloClient], seconds: float) -> Load:
    return await timed([c.play for c in clients], seconds)


async def bench_http(
    plain_url: str, citus_url: str, settings: Settings, nodes: Sequence[Node]
) -> dict[str, Any]:
    # Solo tables need no turn clock: without it (and the lobby gauge) the service runs only
    # what the moves ask for, so Citus' counters over these slices are the moves' statements.
    os.environ["SWARM_METRICS"] = "0"
    os.environ["SWARM_RUN_CLOCK"] = "off"
    servers = {PLAIN: Server(plain_url, "service", "run"), TWO: Server(citus_url, "service", "run")}
    try:
        await asyncio.gather(*(s.wait_healthy() for s in servers.values()))
        clients: dict[str, list[SoloClient]] = {}
        for mode, server in servers.items():
            clients[mode] = [SoloClient(RawHttp(server.port)) for _ in range(settings.http_clients)]
            for c in clients[mode]:
                await c.set_up()
        for mode in servers:  # warm: caches, connections
            await http_slice(clients[mode], 1.0)
        per: dict[int, dict[str, list[dict[str, float]]]] = {}
        shares: list[tuple[int, int]] = []
        for r in range(settings.rounds):
            for n in (1, settings.http_clients):
                order = (PLAIN, TWO) if (r + n) % 2 == 0 else (TWO, PLAIN)
                for mode in order:
                    counted = mode == TWO
                    before = counters_now([citus_url]) if counted else (0, 0, 0)
                    cpu0, wall0 = cpu_now(nodes), time.perf_counter()
                    load = await http_slice(clients[mode][:n], settings.http_seconds)
                    cpu1, wall = cpu_now(nodes), time.perf_counter() - wall0
                    if counted:
                        after = counters_now([citus_url])
                        shares.append((after[0] - before[0], after[1] - before[1]))
                    per.setdefault(n, {}).setdefault(mode, []).append(
                        {
                            "moves_per_s": load.per_s,
                            "p50_ms": 1000 * percentile(load.latencies, 50),
                            "p99_ms": 1000 * percentile(load.latencies, 99),
                            "errors": float(sum(load.errors.values())),
                            **{
                                f"cores {k}": (cpu1[k] - cpu0[k]) / wall
                                for k in cpu0
                                if k != "bench process"
                            },
                        }
                    )
            say(f"http round {r + 1}/{settings.rounds}")
        for mode in servers:
            for c in clients[mode]:
                await c.http.close()
    finally:
        for s in servers.values():
            s.stop()
    out: dict[str, Any] = {}
    for n, modes in per.items():
        entry: dict[str, Any] = {
            mode: {k: spread([s[k] for s in slices]) for k in slices[0]}
            for mode, slices in modes.items()
        }
        for key in ("p50_ms", "p99_ms"):
            entry[f"{key} citus / plain"] = spread(
                [c[key] / p[key] for c, p in zip(modes[TWO], modes[PLAIN], strict=True) if p[key]]
            )
        out[str(n)] = entry
    single = sum(s for s, _ in shares)
    multi = sum(m for _, m in shares)
    out["statements"] = {
        "single_shard": single,
        "multi_shard": multi,
        "router_share": single / (single + multi) if single + multi else 0.0,
    }
    return out


# --- the run --------------------------------------------------------------------------------------


async def bench_appends(
    dbs: Databases, settings: Settings, nodes: list[Node], plain: Node | None
) -> dict[str, Any]:
    games = recorded_games(settings.games)
    counted = nodes + ([plain] if plain else [])
    max_clients = settings.clients
    pools: list[Pool] = []

    async def pool(url: str) -> Pool:
        p = await open_pool(url, min_size=1, max_size=max_clients)
        pools.append(p)
        return p

    try:
        plain_pool = await pool(dbs.plain)
        one_pool = await pool(dbs.one)
        two_pool = await pool(dbs.two)
        with psycopg.connect(dbs.two, autocommit=True) as conn:
            rows = conn.execute(_PLACEMENTS).fetchall()
        lows = sorted(r[0] for r in rows)
        placements = {lows.index(low): (host, port) for low, host, port in rows}
        name = database_name(dbs.two)
        worker_urls = {
            where: f"postgresql://postgres@{where[0]}:{where[1]}/{name}"
            for where in sorted(set(placements.values()))
        }
        worker_pools: dict[tuple[str, int] | None, Pool] = {
            where: await pool(url) for where, url in worker_urls.items()
        }
        old = with_0018_append(dbs.two)
        shards = len(placements)
        n = max_clients
        targets = {
            PLAIN: Target(
                PLAIN, await _writers(PLAIN, {None: plain_pool}, plain_pool, n, games), []
            ),
            ONE: Target(
                ONE, await _writers(ONE, {None: one_pool}, one_pool, n, games, shards), [dbs.one]
            ),
            TWO: Target(
                TWO, await _writers(TWO, {None: two_pool}, two_pool, n, games, shards), [dbs.two]
            ),
            OLD: Target(
                OLD,
                await _writers(OLD, {None: two_pool}, two_pool, n, games, shards),
                [dbs.two],
                old,
            ),
            BARE: Target(
                BARE, await _writers(BARE, {None: two_pool}, two_pool, n, games, shards), [dbs.two]
            ),
            DIRECT: Target(
                DIRECT,
                await _writers(DIRECT, worker_pools, two_pool, n, games, shards, placements),
                list(worker_urls.values()),
            ),
        }
        for mode in MODES:  # warm up: connections, stream heads, shard connections
            await run_slice(targets[mode], counted, max_clients, 1.0)
        loaded: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
        alone: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
        for r in range(settings.rounds):
            order = MODES[r % len(MODES) :] + MODES[: r % len(MODES)]
            order = order if r % 2 == 0 else tuple(reversed(order))
            for mode in order:
                s = await run_slice(targets[mode], counted, max_clients, settings.seconds)
                loaded[mode].append(s.figures())
                s = await run_slice(targets[mode], counted, 1, settings.latency_seconds)
                alone[mode].append(s.figures())
            say(
                f"appends round {r + 1}/{settings.rounds}: "
                + ", ".join(f"{m} {loaded[m][-1]['appends_per_s']:.0f}/s" for m in MODES)
            )
    finally:
        for p in pools:
            await p.close()

    def summary(slices: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
        return {
            mode: {k: spread([s[k] for s in each]) for k in each[0]}
            for mode, each in slices.items()
        }

    def ratio(a: str, b: str) -> dict[str, float]:
        return spread(
            [
                x["appends_per_s"] / y["appends_per_s"]
                for x, y in zip(loaded[a], loaded[b], strict=True)
            ]
        )

    single = sum(s["single_shard"] for m in (ONE, TWO, OLD, BARE) for s in loaded[m] + alone[m])
    multi = sum(s["multi_shard"] for m in (ONE, TWO, OLD, BARE) for s in loaded[m] + alone[m])
    return {
        "loaded": summary(loaded),
        "alone": summary(alone),
        "ratios": {
            "two / one": ratio(TWO, ONE),
            "one / plain": ratio(ONE, PLAIN),
            "two / plain": ratio(TWO, PLAIN),
            "two unchecked / two": ratio(BARE, TWO),
            "two direct / two": ratio(DIRECT, TWO),
            "two direct / plain": ratio(DIRECT, PLAIN),
            "two / two with 0018's append": ratio(TWO, OLD),
        },
        "statements": {
            "single_shard": single,
            "multi_shard": multi,
            "router_share": single / (single + multi) if single + multi else 0.0,
        },
    }


async def run(settings: Settings, plain_url: str | None, http: bool = True) -> dict[str, Any]:
    nodes = cluster_nodes()
    if not nodes:
        raise RuntimeError(f"no Citus cluster in {cluster_dir()} (deploy/citus-cluster.sh up)")
    server = None if plain_url else PlainPostgres(like=nodes[0].pid)
    try:
        plain_node = None if server is None else Node("plain", server.pid, "127.0.0.1", server.port)
        dbs = create_databases(plain_url or (server.url if server else ""), nodes[0].host)
        try:
            results: dict[str, Any] = {
                "settings": vars(settings),
                "load_before": os.getloadavg(),
                "cores": os.cpu_count(),
                "nodes": [n.name for n in nodes] + (["plain"] if plain_node else []),
                "mode": cluster("env").split("SWARM_CITUS_MODE=")[-1].strip(),
            }
            say("appends…")
            results["appends"] = await bench_appends(dbs, settings, nodes, plain_node)
            results["on_paper"] = on_paper(results["appends"])
            if http:
                say("moves over HTTP…")
                counted = nodes + ([plain_node] if plain_node else [])
                results["http"] = await bench_http(dbs.plain, dbs.two, settings, counted)
            results["load_after"] = os.getloadavg()
            return results
        finally:
            dbs.drop()
    finally:
        if server is not None:
            server.stop()


# --- on paper: the workers for 100,000 online games -------------------------------------------

GAMES = 100_000
# A 4-seat online game at people's pace makes about one move a second (make bench-online: 24
# answered moves/s at 25 games, 95 at 100); each move is one append (its events, the reveal and
# the next turn's timer row ride in it). The clocks (20 s a turn, 10 s a stem choice: the spec)
# only bound a game from below: 4 appends in 20 s, 0.2 a second. Clock expiries, game ends,
# play-again and joins add appends of their own: 10 % on top.
APPENDS_PER_GAME_S = 1.0 * 1.1
UTILISATION = 0.5  # a node's CPU at most half busy at the design load: headroom for peaks
CORES_PER_WORKER = 8


def on_paper(appends: dict[str, Any]) -> dict[str, float]:
    """The CPU the design load needs on each kind of node, from the CPU per append measured with
    two workers (through the coordinator, and straight to the shard's worker)."""
    demand = GAMES * APPENDS_PER_GAME_S / UTILISATION  # appends a second of capacity

    def per_append(mode: str, group: str) -> float:
        key = f"cpu_ms_per_append {group}"
        return float(appends["loaded"][mode][key]["median"]) / 1000

    workers = per_append(TWO, "worker 1") + per_append(TWO, "worker 2")
    coordinator = per_append(TWO, "coordinator")
    direct = per_append(DIRECT, "worker 1") + per_append(DIRECT, "worker 2")
    plain = per_append(PLAIN, "plain")
    return {
        "appends_per_s_needed": GAMES * APPENDS_PER_GAME_S,
        "capacity_per_s": demand,
        "worker_cores": demand * workers,
        "workers": demand * workers / CORES_PER_WORKER,
        "coordinator_cores": demand * coordinator,
        "worker_cores_straight": demand * direct,
        "workers_straight": demand * direct / CORES_PER_WORKER,
        "plain_cores": demand * plain,
    }


# --- the report -----------------------------------------------------------------------------------


def _cell(s: dict[str, float], digits: int = 0) -> str:
    return f"{s['median']:,.{digits}f} ({s['min']:,.{digits}f}–{s['max']:,.{digits}f})"


def print_report(results: dict[str, Any]) -> None:
    a = results["appends"]
    groups = results["nodes"]
    print(f"\nload {results['load_before']} → {results['load_after']}, {results['cores']} cores")
    print(f"\nAppends ({results['settings']['clients']} writers; one writer: p50 alone)")
    print(
        "| mode | appends/s | p50 / p99 ms | p50 ms, one writer | "
        + " | ".join(f"CPU ms/append {g}" for g in ["bench process", *groups])
        + " | cores used: "
        + ", ".join(["bench", *groups, "other"])
        + " | WAL B/append: "
        + ", ".join(groups)
        + " |"
    )
    print("|---" * (6 + len(groups)) + "|")
    for mode in MODES:
        f = a["loaded"][mode]
        cpu = " | ".join(_cell(f[f"cpu_ms_per_append {g}"], 2) for g in ["bench process", *groups])
        cores = ", ".join(
            f"{f[f'cores {g}']['median']:.2f}" for g in ["bench process", *groups, "other"]
        )
        wal = ", ".join(f"{f[f'wal_bytes_per_append {g}']['median']:,.0f}" for g in groups)
        print(
            f"| {LABELS[mode]} | {_cell(f['appends_per_s'])} | {f['p50_ms']['median']:.1f} / "
            f"{f['p99_ms']['median']:.1f} | {a['alone'][mode]['p50_ms']['median']:.2f} | {cpu} | "
            f"{cores} | {wal} |"
        )
    print()
    for name, s in a["ratios"].items():
        print(f"{name}: {_cell(s, 3)}")
    st = a["statements"]
    print(
        f"router share (Citus appends): {st['router_share']:.4f} "
        f"({st['single_shard']} single-shard, {st['multi_shard']} multi-shard)"
    )
    paper = on_paper(a)
    print(
        f"\non paper, {GAMES:,} online games ({APPENDS_PER_GAME_S} appends/s a game, nodes at "
        f"{UTILISATION:.0%} CPU, {CORES_PER_WORKER}-core workers): "
        f"{paper['worker_cores']:,.0f} worker cores ({paper['workers']:,.0f} workers) and "
        f"{paper['coordinator_cores']:,.0f} coordinator cores through the coordinator; "
        f"{paper['worker_cores_straight']:,.0f} worker cores ({paper['workers_straight']:,.0f} "
        f"workers) straight to the workers; one plain PostgreSQL would need "
        f"{paper['plain_cores']:,.0f} cores"
    )
    if "http" in results:
        h = results["http"]
        print("\nA move over HTTP (solo tables), plain vs Citus (two workers)")
        print(
            "| clients | plain p50 / p99 ms | Citus p50 / p99 ms | p50 Citus ÷ plain"
            " | p99 Citus ÷ plain | moves/s plain / Citus |"
        )
        print("|---|---|---|---|---|---|")
        for n, e in h.items():
            if n == "statements":
                continue
            p, c = e[PLAIN], e[TWO]
            print(
                f"| {n} | {p['p50_ms']['median']:.1f} / {p['p99_ms']['median']:.1f} | "
                f"{c['p50_ms']['median']:.1f} / {c['p99_ms']['median']:.1f} | "
                f"{_cell(e['p50_ms citus / plain'], 2)} | {_cell(e['p99_ms citus / plain'], 2)} | "
                f"{p['moves_per_s']['median']:.0f} / {c['moves_per_s']['median']:.0f} |"
            )
        st = h["statements"]
        print(
            f"statements during the Citus HTTP slices: {st['single_shard']} single-shard, "
            f"{st['multi_shard']} multi-shard (router share {st['router_share']:.4f})"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one short round (for iteration)")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--clients", type=int)
    parser.add_argument("--http-clients", type=int)
    parser.add_argument("--no-http", action="store_true", help="the appends only")
    parser.add_argument("--plain-url", help="a plain PostgreSQL server's URL (default: its own)")
    parser.add_argument("--json", type=Path, default=RESULTS_FILE)
    parser.add_argument("--report", type=Path, help="print a kept run's results; run nothing")
    args = parser.parse_args(argv)
    if args.report:
        print_report(json.loads(args.report.read_text()))
        return 0
    settings = QUICK if args.quick else Settings()
    changes = {
        k: v
        for k, v in (
            ("rounds", args.rounds),
            ("seconds", args.seconds),
            ("clients", args.clients),
            ("http_clients", args.http_clients),
        )
        if v is not None
    }
    if changes:
        settings = Settings(**(vars(settings) | changes))
    results = asyncio.run(run(settings, args.plain_url, http=not args.no_http))
    args.json.write_text(json.dumps(results, indent=2, default=str))
    print_report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
