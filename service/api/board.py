"""The reference board (issue 14): the browser front end, served as static files at `/`.

The board is plain HTML, CSS and ES modules in `service/board/`, with no build step. It is
a client like any other: it talks to the service only through the documented operations, over
the same origin, so serving it here gives it no private door. Files are sent with
`no-cache` (revalidated on every load), so a new release is picked up without a hard reload.
"""

from __future__ import annotations

from pathlib import Path

from litestar.datastructures import CacheControlHeader
from litestar.router import Router
from litestar.static_files import create_static_files_router

BOARD_DIRECTORY = Path(__file__).parents[1] / "board"


def board_router() -> Router:
    """`/` serves `index.html`; `/board.js` and the rest are the files beside it."""
    return create_static_files_router(
        path="/",
        directories=[BOARD_DIRECTORY],
        html_mode=True,
        name="board",
        include_in_schema=False,
        cache_control=CacheControlHeader(no_cache=True),
    )
