"""The API documentation UI, served from pinned local copies (service/api/static/VENDORED.md):
`/docs` (Scalar) and `/docs/swagger` (Swagger UI) need no CDN, so they work offline and the
JavaScript a deployment serves is the one it was tested with."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

from litestar.enums import ScopeType
from litestar.static_files import create_static_files_router
from litestar.types import ASGIApp, Message, Receive, Scope, Send

# The pages draw the refined document (service/api/openapi.py), the one /docs/openapi.json serves.
from service.api.openapi import RefinedJson as JsonRenderPlugin
from service.api.openapi import RefinedScalar as ScalarRenderPlugin
from service.api.openapi import RefinedSwagger as SwaggerRenderPlugin

STATIC_DIR = Path(__file__).resolve().parent / "static"
STATIC_PATH = "/static/docs"
SCALAR_VERSION = "1.76.0"
SWAGGER_VERSION = "5.18.2"


def docs_render_plugins() -> list[Any]:
    return [
        ScalarRenderPlugin(
            version=SCALAR_VERSION,
            js_url=f"{STATIC_PATH}/scalar/standalone.js",
            css_url=f"{STATIC_PATH}/scalar/page.css",
            favicon="",
            # No web fonts from Scalar's CDN: the system fonts will do.
            options={"withDefaultFonts": False},
        ),
        SwaggerRenderPlugin(
            version=SWAGGER_VERSION,
            js_url=f"{STATIC_PATH}/swagger/swagger-ui-bundle.js",
            css_url=f"{STATIC_PATH}/swagger/swagger-ui.css",
            standalone_preset_js_url=f"{STATIC_PATH}/swagger/swagger-ui-standalone-preset.js",
            favicon="",
            path="/swagger",
        ),
        JsonRenderPlugin(),
    ]


def docs_static_router() -> Any:
    return create_static_files_router(
        path=STATIC_PATH,
        directories=[STATIC_DIR],
        include_in_schema=False,
        # Pinned files: a browser may keep them for a day.
        cache_control=None,
    )


# The board keeps its bearer token in the browser's storage, which every page of the origin can
# read: the documentation's pages too, which run a few megabytes of vendored JavaScript. So they
# get a policy as strict as they allow: no script but the pinned files and the page's own inline
# scripts (by hash: an injected one does not run), nothing fetched or sent anywhere but here, no
# framing. (Scalar and Swagger UI set styles inline, so styles may be inline.)
_DOCS_POLICY = (
    "default-src 'none'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
)
_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S | re.I)


def docs_policy_for(html: bytes) -> str:
    """The Content-Security-Policy of one documentation page: the policy above, and the hash of
    each inline script the page holds (CSP level 2), so those and the pinned files alone run."""
    hashes = sorted(
        {
            "'sha256-" + base64.b64encode(hashlib.sha256(body).digest()).decode() + "'"
            for body in _INLINE_SCRIPT.findall(html)
        }
    )
    return "; ".join((f"script-src 'self' {' '.join(hashes)}".rstrip(), *_DOCS_POLICY))


def _is_docs_page(scope: Scope) -> bool:
    path: str = scope.get("path", "")
    return scope["type"] == ScopeType.HTTP and (path == "/docs" or path.startswith("/docs/"))


def docs_policy(app: ASGIApp) -> ASGIApp:
    """Every HTML answer under /docs goes out with `docs_policy_for` its body (a middleware)."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if not _is_docs_page(scope):
            await app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def buffered(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body" or not start:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(chunks)
            headers = list(start.get("headers", ()))
            html = any(k.lower() == b"content-type" and b"text/html" in v for k, v in headers)
            if html:
                headers.append((b"content-security-policy", docs_policy_for(body).encode()))
            status: int = start["status"]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            start.clear()
            await send({"type": "http.response.body", "body": body, "more_body": False})

        await app(scope, receive, buffered)

    return middleware
