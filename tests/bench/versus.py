"""CPU per move of two versions of the service, interleaved in one run:
``python -m tests.bench.versus --before DIR [--after DIR] [--rounds 5] [--seconds 4]``.

Two service processes (``python -m service run``, one from each checkout; the *after* is this
one unless ``--after`` names another) and the minimal endpoint (``tests/bench/minimal.py``) on
one fresh database migrated by this checkout (both versions must accept its schema). Solo moves
(``make bench``'s solo-table client: a 4-seat table, the caller and three bee players, playing
again when a game ends) against each service and INSERTs against the minimal endpoint, in
slices of ``--seconds`` at 1 and 8 clients, the order of the three turning each round. For each
version: its CPU-seconds over its moves in its slices (``/proc``), ÷ the minimal endpoint's CPU
per INSERT in the same rounds; moves/s ÷ inserts/s. ``--profile`` samples each service with
py-spy in one more 8-client slice each. Every figure is a median over the rounds with its
spread, as in ``make bench``; the machine's load is printed at both ends.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from functools import partial
from pathlib import Path
from typing import Any

from service.store.database import drop_database, ensure_database, provide_database_url
from service.store.migrate import migrate
from tests.bench import loadgen
from tests.bench.bench import (
    Load,
    RawHttp,
    Server,
    SoloClient,
    cpu_seconds,
    insert_worker,
    say,
    spread,
    timed,
)

CLIENTS = (1, 8)


async def _set_up(port: int, n: int) -> list[SoloClient]:
    solos = [SoloClient(RawHttp(port)) for _ in range(n)]
    for i in range(0, n, 8):
        await asyncio.gather(*(s.set_up() for s in solos[i : i + 8]))
    return solos


def _profile(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            str(Path(sys.executable).with_name("py-spy")),
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(int(seconds)),
            "--rate",
            "200",
            "--format",
            "raw",
            "--output",
            str(out),
            "--nonblocking",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def run(args: argparse.Namespace, url: str) -> dict[str, Any]:
    names = ("before", "after")
    services = {
        "before": Server(url, "service", "run", cwd=args.before),
        "after": Server(url, "service", "run", cwd=args.after),
    }
    minimal = Server(url, "tests.bench.minimal")
    servers = [*services.values(), minimal]
    try:
        await asyncio.gather(*(s.wait_healthy() for s in servers))
        solos = {n: await _set_up(services[n].port, max(CLIENTS)) for n in names}
        inserts = [RawHttp(minimal.port) for _ in range(max(CLIENTS))]
        cpu: defaultdict[tuple[str, int], list[float]] = defaultdict(list)
        rate: defaultdict[tuple[str, int], list[float]] = defaultdict(list)
        errors: Counter[str] = Counter()
        for r in range(args.rounds):
            for k in CLIENTS:
                say(f"round {r + 1}/{args.rounds}: {k} clients…")
                loads: list[tuple[str, list[Any], Server]] = [
                    ("before", [s.play for s in solos["before"][:k]], services["before"]),
                    ("inserts", [partial(insert_worker, h) for h in inserts[:k]], minimal),
                    ("after", [s.play for s in solos["after"][:k]], services["after"]),
                ]
                turn = (r + k) % len(loads)
                for name, workers, server in loads[turn:] + loads[:turn]:
                    before_cpu = cpu_seconds(server.process.pid)
                    got: Load = await timed(workers, args.seconds)
                    used = cpu_seconds(server.process.pid) - before_cpu
                    cpu[(name, k)].append(1000 * used / max(got.ops, 1))
                    rate[(name, k)].append(got.per_s)
                    errors.update(got.errors)
        profiles: dict[str, Any] = {}
        if args.profile:
            for name in names:
                say(f"profiling {name} at 8 clients…")
                out = Path(tempfile.mkdtemp(prefix="swarm-versus-")) / f"{name}.txt"
                spy = _profile(services[name].process.pid, args.seconds * 2, out)
                await timed([s.play for s in solos[name][:8]], args.seconds * 2)
                spy.wait(timeout=60)
                if out.exists():
                    profiles[name] = loadgen.summarise_profile(out, top=30)
        for http in [s.http for n in names for s in solos[n]] + inserts:
            await http.close()
    finally:
        for s in servers:
            s.stop()
        for s in servers:
            s.log.unlink(missing_ok=True)
    figures: dict[str, Any] = {}
    for k in CLIENTS:
        for name in names:
            ratios_cpu = [m / i for m, i in zip(cpu[(name, k)], cpu[("inserts", k)], strict=True)]
            ratios_rate = [
                m / i for m, i in zip(rate[(name, k)], rate[("inserts", k)], strict=True)
            ]
            figures[f"{name}_{k}"] = {
                "cpu_ms_per_move": spread(cpu[(name, k)]),
                "cpu_per_move_over_insert": spread(ratios_cpu),
                "moves_per_s": spread(rate[(name, k)]),
                "moves_over_inserts": spread(ratios_rate),
            }
        figures[f"inserts_{k}"] = {
            "cpu_ms_per_insert": spread(cpu[("inserts", k)]),
            "inserts_per_s": spread(rate[("inserts", k)]),
        }
        figures[f"after_over_before_cpu_{k}"] = spread(
            [a / b for a, b in zip(cpu[("after", k)], cpu[("before", k)], strict=True)]
        )
    return {"figures": figures, "errors": dict(errors), "profiles": profiles}


def _fmt(s: dict[str, float]) -> str:
    return f"{s['median']:.2f} ({s['min']:.2f}–{s['max']:.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.versus", description=__doc__)
    parser.add_argument("--before", required=True, help="checkout of the version before")
    parser.add_argument("--after", default=None, help="checkout after (default: this one)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=4.0, help="each slice")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", type=Path, default=Path("bench-versus.json"))
    args = parser.parse_args(argv)
    server_url = provide_database_url(os.environ.get("DATABASE_URL"))
    name = f"swarm_bench_{uuid.uuid4().hex[:12]}"
    url = ensure_database(server_url, name)
    load0 = os.getloadavg()
    started = time.perf_counter()
    try:
        migrate(url)
        results = asyncio.run(run(args, url))
    finally:
        drop_database(server_url, name)
    results["loadavg"] = {"start": load0, "end": os.getloadavg()}
    results["seconds"] = round(time.perf_counter() - started, 1)
    results["command"] = "python -m tests.bench.versus " + " ".join(argv or sys.argv[1:])
    args.json.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    f = results["figures"]
    load = results["loadavg"]
    print(f"\n{results['command']}  (load {load['start']} → {load['end']})")
    print("| clients | figure | before | after |")
    print("|---|---|---|---|")
    for k in CLIENTS:
        b, a, i = f[f"before_{k}"], f[f"after_{k}"], f[f"inserts_{k}"]
        rows = [
            ("service CPU ms per move", "cpu_ms_per_move"),
            (
                f"÷ minimal CPU per insert ({_fmt(i['cpu_ms_per_insert'])} ms)",
                "cpu_per_move_over_insert",
            ),
            ("moves/s ÷ inserts/s", "moves_over_inserts"),
        ]
        for label, key in rows:
            print(f"| {k} | {label} | {_fmt(b[key])} | {_fmt(a[key])} |")
        print(f"| {k} | after ÷ before, CPU per move | | {_fmt(f[f'after_over_before_cpu_{k}'])} |")
    for name, profile in results["profiles"].items():
        top = ", ".join(f"{fn} {p}%" for fn, p in profile.get("self_pct", [])[:15])
        print(f"  {name} profile (self): {top}")
    if results["errors"]:
        print(f"  errors: {results['errors']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
