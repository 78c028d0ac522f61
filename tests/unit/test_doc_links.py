"""Every relative link in README.md and docs/*.md reaches a file, and its #anchor a heading."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", doc.read_text(encoding="utf-8"), flags=re.M | re.S)
    headings = {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    return headings | set(re.findall(r'<a id="([^"]+)">', text))  # explicit anchors too


def test_slugs_are_githubs() -> None:
    assert slug("The clock (online tables only)") == "the-clock-online-tables-only"
    heading = "The database: embedded PostgreSQL, or your own server"
    assert slug(heading) == "the-database-embedded-postgresql-or-your-own-server"


def test_every_relative_link_and_anchor_exists() -> None:
    broken = []
    checked = 0
    for doc in DOCS:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            checked += 1
            if not file.exists():
                broken.append(f"{doc.name}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{doc.name}: {target} (no such heading)")
    assert checked > 10
    assert broken == []
