"""The catalogue of problem codes for people: docs/errors.md in the repository, and the same text
as a page this server serves at `/docs/errors`, each code a section of its own (`#<code>`), where
every problem's `doc_url` points. Both are written from `problems.CATALOGUE`."""

from __future__ import annotations

import html
import re

from litestar import get
from litestar.datastructures import CacheControlHeader

from service.api.problems import CATALOGUE, ERRORS_PAGE, Entry

INTRODUCTION = """\
Every refusal is an RFC 9457 problem (`application/problem+json`) with a `code` that clients
switch on; `type` is `urn:swarm:problem:<code>`, and `doc_url` links to the code's section
below (`/docs/errors#<code>` on the server). This is the whole catalogue: the OpenAPI document
lists the same codes as the enum of `Problem.code`, and a test fails when the server can
answer with a code missing here. Generated from `service/api/problems.py` by
`python -m service documents`.

A 5xx is never the client's fault; a 4xx never changes anything on the server.

**Retrying safely.** Every POST but `submitMove` takes an `Idempotency-Key` header (16 to
255 visible ASCII characters: a new UUID for each new request). Retried with the same key
and the same request within 24 hours, it is answered as the first time (status and body,
with `Idempotent-Replayed: true`) and nothing is done again; a 4xx or 5xx is not kept, so
after one the same key runs the request again. `idempotency-key-reused` and
`idempotency-key-in-use` below are its refusals. A move's `move_id` is its own key (per
player per game); a repeat is answered with `Idempotent-Replayed: true` too. Keys are
scoped to the caller's bearer token (to its address without one), and what is stored is
readable only with the key (README, "Retrying safely").

**Retry by category.** Every problem says whether the same request, sent again unchanged,
can succeed: `retryable` is true for a passing condition (load, a race, a rate limit: wait
`Retry-After` seconds when the answer has that header, else a growing, jittered backoff,
then resend it with its `Idempotency-Key` or `move_id`, a few times at most), false when the
request or the state it meets must change first. A client needs no list of codes to decide;
the table below gives the same value, code by code."""


def _ordered() -> list[tuple[str, Entry]]:
    return sorted(CATALOGUE.items(), key=lambda item: (item[1].status, item[0]))


def _retry(entry: Entry) -> str:
    return "retryable" if entry.retryable else "not retryable"


def errors_markdown() -> str:
    """docs/errors.md: a summary table, then a section per code (its anchor is the code)."""
    lines = [
        "# Error codes",
        "",
        INTRODUCTION,
        "",
        "| Code | Status | Retryable |",
        "|---|---|---|",
    ]
    for code, entry in _ordered():
        lines.append(
            f"| [`{code}`](#{code}) | {entry.status} | {'yes' if entry.retryable else 'no'} |"
        )
    for code, entry in _ordered():
        lines += [
            "",
            f"## {code}",
            "",
            f"{entry.status}, {_retry(entry)}. {entry.meaning}",
            "",
            f"What to do: {entry.action}",
        ]
    return "\n".join(lines) + "\n"


def _inline(text: str) -> str:
    """Markdown's `code` and **strong**, as HTML (the catalogue uses nothing else)."""
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def errors_html() -> str:
    """The page `/docs/errors` serves: the same text, a section per code (`id` the code)."""
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Swarm: error codes</title></head><body>",
        "<h1>Error codes</h1>",
        *(f"<p>{_inline(p)}</p>" for p in INTRODUCTION.split("\n\n")),
    ]
    for code, entry in _ordered():
        parts += [
            f'<section id="{code}"><h2><code>{code}</code></h2>',
            f"<p>{entry.status}, {_retry(entry)}. {_inline(entry.meaning)}</p>",
            f"<p>What to do: {_inline(entry.action)}</p></section>",
        ]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


ERRORS_HTML = errors_html()


@get(
    ERRORS_PAGE,
    include_in_schema=False,
    media_type="text/html; charset=utf-8",
    cache_control=CacheControlHeader(no_cache=True),
    sync_to_thread=False,
)
def errors_page() -> str:
    """The catalogue of problem codes, a section per code: where each problem's `doc_url` leads."""
    return ERRORS_HTML
