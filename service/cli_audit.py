"""`python -m service audit FILE|URL`: read an export, audit it, print the report.

The audit itself is pure (`service.domain.audit`); this entry point does the I/O around it:
reading a file or fetching a URL, and printing. With `--replay`, the game is first told
turn by turn (`service.domain.audit.narrative`). Exit status: 0 when every step passed, 1 when
one failed (the export disagrees with itself or with what you recorded), 2 when the input could
not be read or an expected value is malformed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from service.domain.audit import Expectations, audit_document, parse_hash, parse_head
from service.domain.audit.narrative import narrate


class UnreadableExport(Exception):
    """The export could not be read or parsed as JSON."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="a swarm-game-export/1 JSON file, or its http(s) URL")
    parser.add_argument(
        "--replay",
        action="store_true",
        help="first tell the game turn by turn: who picked what, where each bee flew, who "
        "took what, the stings after each turn",
    )
    parser.add_argument("--token", help="bearer token for a URL")
    parser.add_argument(
        "--expect-commitment", metavar="HASH", help="the commitment you saw before the deal"
    )
    parser.add_argument(
        "--expect-fingerprint", metavar="HASH", help="the fingerprint you saw before turn 1"
    )
    parser.add_argument(
        "--expect-head",
        metavar="VERSION:HASH",
        action="append",
        default=[],
        help="a game event's chain hash you saw during play (repeatable)",
    )
    parser.add_argument(
        "--expect-table-head",
        metavar="VERSION:HASH",
        action="append",
        default=[],
        help="a table event's chain hash you saw before the deal (repeatable)",
    )


def expectations(args: argparse.Namespace) -> Expectations:
    """The parsed --expect-* options; ValueError names the one that is malformed."""
    try:
        return Expectations(
            commitment=_hash(args.expect_commitment),
            fingerprint=_hash(args.expect_fingerprint),
            heads=tuple(parse_head(text) for text in args.expect_head),
            table_heads=tuple(parse_head(text) for text in args.expect_table_head),
        )
    except ValueError as error:
        raise ValueError(f"an --expect option: {error}") from None


def _hash(text: str | None) -> str | None:
    return None if text is None else parse_hash(text)


def load(source: str, token: str | None = None, *, timeout: float = 30.0) -> object:
    """The parsed JSON of a file path or an http(s) URL (Bearer `token` if given)."""
    if source.startswith(("http://", "https://")):
        import httpx

        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            response = httpx.get(source, headers=headers, timeout=timeout, follow_redirects=True)
        except httpx.HTTPError as error:
            raise UnreadableExport(f"cannot fetch {source}: {error}") from None
        if response.status_code != 200:
            raise UnreadableExport(f"cannot fetch {source}: HTTP {response.status_code}")
        text: bytes = response.content
    else:
        try:
            text = Path(source).read_bytes()
        except OSError as error:
            raise UnreadableExport(f"cannot read {source}: {error.strerror or error}") from None
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise UnreadableExport(f"{source} is not JSON: {error}") from None


def run(args: argparse.Namespace) -> int:
    try:
        expect = expectations(args)
        document = load(args.source, args.token)
    except (ValueError, UnreadableExport) as error:
        print(f"audit: {error}", file=sys.stderr)
        return 2
    report = audit_document(document, expect)
    if getattr(args, "replay", False):
        print(narrate(document))
    print(report.render())
    return 0 if report.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service audit")
    add_arguments(parser)
    return run(parser.parse_args(argv))
