"""The reference board (issue 14): the browser front end, served as static files at `/`.

The board is plain HTML, CSS and ES modules in `service/board/`, with no build step. It is
a client like any other: it talks to the service only through the documented operations, over
the same origin, so serving it here gives it no private door. Files are sent with
`no-cache` (revalidated on every load), so a new release is picked up without a hard reload.
One module is not a file: `/levels.js`, the bee levels the setup screen offers, rendered from
the levels' registry (`service/domain/rules/levels.py`) so the board never lists them by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from litestar import Response, get
from litestar.datastructures import CacheControlHeader
from litestar.router import Router
from litestar.static_files import create_static_files_router

from service.domain.rules.levels import ALIASES, DEFAULT_LEVEL, LEVELS, THINKS_LONG_MS, level

BOARD_DIRECTORY = Path(__file__).parents[1] / "board"

LEVELS_MODULE = (
    "// The bee players' levels, from service/domain/rules/levels.py (rendered by the server).\n"
    f"export const DEFAULT_LEVEL = {json.dumps(DEFAULT_LEVEL)};\n"
    "export const LEVELS = "
    + json.dumps(
        [
            {
                "name": lv.name,
                "label": lv.label,
                "description": lv.description,
                "rating": lv.rating.points,
                "rating_interval": [lv.rating.low, lv.rating.high],
            }
            for lv in LEVELS.values()
        ],
        ensure_ascii=False,
    )
    + ";\n"
    # the recorded names (older ones too) of the levels that think off the event loop, so the
    # board waits for them and says "The bees are thinking…"
    "export const THINKING_LEVELS = "
    + json.dumps([name for name in (*LEVELS, *ALIASES) if level(name).cost_ms >= THINKS_LONG_MS])
    + ";\n"
)


@get(
    "/levels.js",
    include_in_schema=False,
    media_type="text/javascript",
    cache_control=CacheControlHeader(no_cache=True),
    sync_to_thread=False,
)
def levels_module() -> str:
    """The bee levels, as an ES module the setup screen imports."""
    return LEVELS_MODULE


# The board keeps its bearer token in the browser's storage, so no script may run but the
# board's own files: no inline script or style attribute in markup, nothing from another origin,
# no framing. WebCrypto, EventSource and fetch need only 'self'.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
BOARD_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


async def _board_headers(response: Response[Any]) -> Response[Any]:
    """Every board file (the page above all) goes out with the policy."""
    response.headers.update(BOARD_HEADERS)
    return response


def board_router() -> Router:
    """`/` serves `index.html`; `/board.js` and the rest are the files beside it (`levels_module`
    is registered beside this router: a route inside it would be shadowed by the files)."""
    return create_static_files_router(
        path="/",
        directories=[BOARD_DIRECTORY],
        html_mode=True,
        name="board",
        include_in_schema=False,
        cache_control=CacheControlHeader(no_cache=True),
        after_request=_board_headers,
    )
