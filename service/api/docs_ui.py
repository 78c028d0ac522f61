"""The API documentation UI, served from pinned local copies (service/api/static/VENDORED.md):
`/docs` (Scalar) and `/docs/swagger` (Swagger UI) need no CDN, so they work offline and the
JavaScript a deployment serves is the one it was tested with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar.static_files import create_static_files_router

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
