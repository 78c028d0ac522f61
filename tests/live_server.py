"""The real app served by uvicorn on a loopback port, in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Generator
from typing import Any

import httpx
import uvicorn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve(app: Any, **config: Any) -> Generator[str]:
    """Serve `app` until the generator is closed; yields its base URL once /health answers."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **config
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    else:  # pragma: no cover
        raise RuntimeError("the live server did not start")
    yield base
    server.should_exit = True
    thread.join(timeout=10)
