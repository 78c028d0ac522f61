"""Instructions per solo move of two versions of the service, and per request of the minimal
endpoint, counted by callgrind: ``python -m tests.bench.instructions --before DIR [--after DIR]
[--moves 400]``.

CPU time moves by 10–30 % from one minute to the next on a shared machine (``versus.py`` says
how much in its spread); the instructions a process executes do not, so a change of a few per
cent shows here when it cannot in CPU seconds. Each server (``python -m service run`` from each
checkout, then the minimal endpoint, ``tests/bench/minimal.py``) runs alone under ``valgrind
--tool=callgrind`` with instrumentation off; 8 clients (``make bench``'s solo-table client, or
INSERTs for the minimal endpoint) warm it up for 4 s, then instrumentation is switched on for
``--moves`` answers and the total is dumped. Counted: the server process's user-space
instructions (its Python, the libraries, not the kernel), divided by its answers. Callgrind
runs the process about 50 times slower, so the pool and command timeouts are raised for it.
The solo client plays again when a game ends, so a move's figure includes its share of that.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

from service.store.database import drop_database, ensure_database, provide_database_url
from service.store.migrate import migrate
from tests.bench.bench import (
    Load,
    RawHttp,
    Server,
    SoloClient,
    free_port,
    insert_worker,
    say,
    server_env,
)

CLIENTS = 8


class CallgrindServer(Server):
    """A server process under callgrind, instrumentation off until `count`."""

    def __init__(self, database_url: str, module: str, out: Path, cwd: str | None = None) -> None:
        self.port = free_port()
        self.log = Path(tempfile.mkstemp(prefix=f"swarm-callgrind-{module}-", suffix=".log")[1])
        self.out = out
        env = server_env(database_url, SWARM_DB_ACQUIRE_TIMEOUT="30", SWARM_DB_COMMAND_TIMEOUT="60")
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            module,
            "--port",
            str(self.port),
        ]
        if module == "service":
            command[command.index("-m") + 2 : command.index("-m") + 2] = ["run"]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=cwd
            )

    def control(self, *args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(self.process.pid)], capture_output=True)


Worker = Callable[[Load, list[float]], Awaitable[None]]


async def _until(workers: list[Worker], answers: int) -> Load:
    load = Load()
    stop_at = [time.perf_counter() + 3600.0]

    async def watch() -> None:
        while load.ops < answers:
            await asyncio.sleep(0.05)
        stop_at[0] = 0.0

    await asyncio.gather(watch(), *(w(load, stop_at) for w in workers))
    return load


async def count(server: CallgrindServer, workers: list[Worker], answers: int) -> dict[str, float]:
    warm = Load()
    stop_at = [time.perf_counter() + 4.0]
    await asyncio.gather(*(w(warm, stop_at) for w in workers))
    server.control("-z")
    server.control("-i", "on")
    load = await _until(workers, answers)
    before = set(glob.glob(f"{server.out}*"))
    server.control("-d")
    server.control("-i", "off")
    total = 0
    for dump in sorted(set(glob.glob(f"{server.out}*")) - before):
        for line in Path(dump).read_text().splitlines():
            if line.startswith(("totals:", "summary:")):
                total += int(line.split()[1])
                break
        Path(dump).unlink()
    return {"answers": load.ops, "instructions_per_answer": total / max(load.ops, 1)}


async def run(args: argparse.Namespace, url: str, out_dir: Path) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    for name, module, cwd in (
        ("before", "service", args.before),
        ("after", "service", args.after),
        ("minimal", "tests.bench.minimal", None),
    ):
        say(f"{name}: under callgrind…")
        server = CallgrindServer(url, module, out_dir / f"{name}.out", cwd=cwd)
        try:
            await server.wait_healthy(timeout=300)
            workers: list[Worker]
            if module == "service":
                solos = [SoloClient(RawHttp(server.port)) for _ in range(CLIENTS)]
                for solo in solos:
                    await solo.set_up()
                workers = [s.play for s in solos]
            else:
                workers = [partial(insert_worker, RawHttp(server.port)) for _ in range(CLIENTS)]
            results[name] = await count(server, workers, args.moves)
        finally:
            server.stop()
            server.log.unlink(missing_ok=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.instructions", description=__doc__)
    parser.add_argument("--before", required=True, help="checkout of the version before")
    parser.add_argument("--after", default=None, help="checkout after (default: this one)")
    parser.add_argument("--moves", type=int, default=400, help="answers counted per server")
    args = parser.parse_args(argv)
    server_url = provide_database_url(os.environ.get("DATABASE_URL"))
    name = f"swarm_bench_{uuid.uuid4().hex[:12]}"
    url = ensure_database(server_url, name)
    try:
        migrate(url)
        with tempfile.TemporaryDirectory(prefix="swarm-callgrind-") as out:
            results = asyncio.run(run(args, url, Path(out)))
    finally:
        drop_database(server_url, name)
    per = {n: r["instructions_per_answer"] / 1e6 for n, r in results.items()}
    print("| server | answers | M instructions an answer | ÷ minimal |")
    print("|---|---|---|---|")
    for n, r in results.items():
        print(f"| {n} | {r['answers']:.0f} | {per[n]:.3f} | {per[n] / per['minimal']:.2f} |")
    print(f"after ÷ before: {per['after'] / per['before']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
