"""The service behind PgBouncer in session mode, the mode docs/operations.md recommends.

Session pooling keeps one server connection per client connection for its whole life, so all
that the service keeps per session holds: the LISTEN connection of the stream wake-ups, the
migration's session advisory lock, `SET ROLE swarm_app` and the per-connection timeouts.
(Transaction pooling would break LISTEN and hand session state to other clients.) Uses
Debian's `pgbouncer` package; `.ci/run` installs it when missing.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from service.store.database import database_name
from service.store.pool import open_pool
from tests.live_server import free_port
from tests.ops.players import Person

pytestmark = pytest.mark.slow

PGBOUNCER = shutil.which("pgbouncer") or next(
    (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.path.exists(p)), None
)


@pytest.fixture
def bouncer(database_url: str) -> Iterator[str]:
    """A PgBouncer (session mode) in front of the test database; yields a URL through it."""
    if PGBOUNCER is None:
        pytest.skip(
            "PGBOUNCER NOT INSTALLED: the recommended PgBouncer setup is NOT tested "
            "(apt-get install pgbouncer; .ci/run does this)"
        )
    parts = urlsplit(database_url)
    query = parse_qs(parts.query)
    host = query.get("host", [parts.hostname or "127.0.0.1"])[0]
    port = parts.port or int(query.get("port", ["5432"])[0])
    user = parts.username or "postgres"
    name = database_name(database_url)
    listen = free_port()
    folder = Path(tempfile.mkdtemp(prefix="swarm-pgbouncer-"))
    folder.chmod(0o755)  # pgbouncer drops root for the postgres user, who must read these
    (folder / "users.txt").write_text(f'"{user}" ""\n')
    (folder / "pgbouncer.ini").write_text(
        f"""[databases]
{name} = host={host} port={port} dbname={name} user={user}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/users.txt
pool_mode = session
max_client_conn = 200
default_pool_size = 40
"""
    )
    for path in folder.iterdir():
        path.chmod(0o644)
    command = [PGBOUNCER, str(folder / "pgbouncer.ini")]
    if os.geteuid() == 0:  # pgbouncer will not run as root: as the server's own user, who
        # can reach its unix socket (the embedded server's), else as postgres
        owner = pwd.getpwuid(os.stat(host).st_uid).pw_name if host.startswith("/") else None
        if owner in (None, "root"):
            owner = "postgres" if _user_exists("postgres") else "nobody"
        command[1:1] = ["-u", owner]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", listen)) == 0:
                    break
            time.sleep(0.05)
        else:
            raise RuntimeError("pgbouncer did not start")
        yield f"postgresql://{user}@127.0.0.1:{listen}/{name}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


async def test_pool_settings_reach_postgres_through_pgbouncer(bouncer: str) -> None:
    pool = await open_pool(bouncer, min_size=1, max_size=2)
    try:
        assert await pool.fetchval("show statement_timeout") == "10s"
        assert await pool.fetchval("show lock_timeout") == "5s"
        assert await pool.fetchval("show idle_in_transaction_session_timeout") == "30s"
    finally:
        await pool.close()


def test_service_behind_pgbouncer_session_mode(swarm: Any, bouncer: str) -> None:
    # A long heartbeat: the event must come through LISTEN/NOTIFY, not a heartbeat re-read.
    server = swarm(database=bouncer, SWARM_STREAM_HEARTBEAT="30").start()
    ada = Person(server.url)
    game = ada.solo_game()
    got: list[str] = []
    opened = threading.Event()

    def follow() -> None:
        with (
            httpx.Client(base_url=server.url, timeout=30) as client,
            client.stream("GET", f"/games/{game}/stream", headers=ada.headers) as response,
        ):
            for line in response.iter_lines():
                opened.set()
                got.append(line)
                if line.startswith("event: bee_tapped"):
                    return

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    assert opened.wait(10)
    time.sleep(0.5)
    assert ada.tap(game).status_code == 200
    thread.join(timeout=5)
    assert any(line.startswith("event: bee_tapped") for line in got), got[-10:]
    assert ada.play_one(game) is not None  # appends under the advisory lock keep working
    ready = httpx.get(f"{server.url}/health/ready", timeout=5)
    assert ready.status_code == 200, ready.text
