"""`make run` survives its own crash (issue 17): a SIGKILLed run, then a normal run stopped with
Ctrl-C, leaves no PostgreSQL behind.

Before: the killed process's pid stayed in the embedded server's `.handle_pids.json`, so every
later run believed another process still used the server and left it running at exit.
`make run` is `python -m service serve` without DATABASE_URL; this runs exactly that, with its
data in a temporary folder (SWARM_DATA_DIR).
"""

from __future__ import annotations

import json
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def _postgres_processes(data_dir: Path) -> list[int]:
    """Pids of PostgreSQL processes serving `data_dir` (its postmaster and children)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "postgres" in cmdline and str(data_dir) in cmdline:
            found.append(int(proc.name))
    postmaster = data_dir / "postmaster.pid"
    if postmaster.exists():
        pid = int(postmaster.read_text().split()[0])
        if Path(f"/proc/{pid}").exists():
            found.append(pid)
    return sorted(set(found))


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Not under pytest's tmp_path: every pytest session on the machine resets its root to
    # 0700, and the embedded server (run as its own user when we are root) must reach it.
    folder = Path(tempfile.mkdtemp(prefix="swarm-crash-"))
    try:
        yield (folder / "pgdata").resolve()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_crash_then_ctrl_c_leaves_no_postgres(swarm: Any, data_dir: Path) -> None:
    first = swarm(database=None, SWARM_DATA_DIR=str(data_dir)).start(timeout=120)
    assert _postgres_processes(data_dir), "the embedded server should be running"
    first.kill()  # SIGKILL: no atexit, no cleanup
    assert first.process is not None
    killed = first.process.pid
    assert killed in json.loads((data_dir / ".handle_pids.json").read_text())

    second = swarm(database=None, SWARM_DATA_DIR=str(data_dir)).start(timeout=120)
    assert killed not in json.loads((data_dir / ".handle_pids.json").read_text())
    second.signal(signal.SIGINT, group=True)  # Ctrl-C in the terminal
    assert second.wait(timeout=30) == 0, second.log_text()[-3000:]
    deadline = time.monotonic() + 10
    while _postgres_processes(data_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _postgres_processes(data_dir) == [], "a PostgreSQL was left running"
    assert "Traceback" not in second.log_text()
