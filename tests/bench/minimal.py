"""The benchmark's baseline service: a minimal Litestar endpoint doing one INSERT and commit.

``python -m tests.bench.minimal --port N`` (``DATABASE_URL`` in the environment). It runs under
uvicorn exactly as ``python -m service run`` does (same defaults, same logging), with an
asyncpg pool of the same size, so ``submitMove ÷ POST /insert`` measured by the same client at
the same concurrency is what the service's own work costs over the least a web service that
writes to PostgreSQL can do.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from litestar import Litestar, get, post

_POOL: dict[str, Any] = {}

CREATE = "create table if not exists bench_insert (id bigserial primary key, payload jsonb)"
INSERT = "insert into bench_insert (payload) values ($1::text::jsonb) returning id"


@post("/insert", status_code=200)
async def insert(data: dict[str, Any]) -> dict[str, int]:
    import msgspec

    row_id = await _POOL["pool"].fetchval(INSERT, msgspec.json.encode(data).decode())
    return {"id": row_id}


@get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    pool = await asyncpg.create_pool(os.environ["DATABASE_URL"], min_size=1, max_size=10)
    assert pool is not None
    await pool.execute(CREATE)
    _POOL["pool"] = pool
    try:
        yield
    finally:
        await pool.close()


def create_app() -> Litestar:
    return Litestar([insert, health], lifespan=[lifespan])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import uvicorn

    uvicorn.run("tests.bench.minimal:create_app", factory=True, host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
