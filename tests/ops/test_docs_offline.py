"""/docs and /docs/swagger load nothing from the internet: every script, style sheet and icon
is a pinned local file (service/api/static/VENDORED.md), served by the app itself."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.api.docs_ui import STATIC_DIR
from service.api.problems import CATALOGUE

VENDORED = STATIC_DIR / "VENDORED.md"


@pytest.mark.parametrize("page", ["/docs", "/docs/swagger"])
async def test_docs_pages_use_only_local_files(page: str, database_url: str) -> None:
    async with AsyncTestClient(app=create_app(database_url, run_clock=False)) as client:
        html = (await client.get(page)).text
        urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
        assert urls, html[:500]
        assert not re.search(r"https?://", html.replace("http://www.w3.org", "")), html
        for url in urls:
            assert url.startswith("/"), url
            asset = await client.get(url)
            assert asset.status_code == 200, url
            assert len(asset.content) > 20


def test_vendored_files_match_their_pinned_hashes() -> None:
    rows = re.findall(r"^\| (\S+) \| .* \| ([0-9a-f]{64}) \|$", VENDORED.read_text(), re.M)
    assert len(rows) == 4
    for name, digest in rows:
        data = (STATIC_DIR / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, name
    for licence in ("scalar/LICENSE", "swagger/LICENSE", "swagger/NOTICE"):
        assert (Path(STATIC_DIR) / licence).stat().st_size > 40


async def test_every_problems_doc_url_leads_to_its_section(database_url: str) -> None:
    """Issue 44 item 11: a problem's `doc_url` is `/docs/errors#<code>`, a page this server
    serves, with a section of that id for every code, saying whether it is worth retrying."""
    async with AsyncTestClient(app=create_app(database_url, run_clock=False)) as client:
        missing = await client.get("/games/nope")
        page = await client.get("/docs/errors")
    assert missing.json()["doc_url"] == "/docs/errors#not-found"
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    for code, entry in CATALOGUE.items():
        retry = "retryable" if entry.retryable else "not retryable"
        section = f'<section id="{code}"><h2><code>{code}</code></h2>\n<p>{entry.status}, {retry}.'
        assert section in page.text, code
