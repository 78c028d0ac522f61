"""What "in reach" means on the game screen (issue 25): the page is not scrolled, and the whole
hand, CONFIRM and (when choosing) every TAKE button lie inside the window and are not covered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SIZES = [(1280, 800), (1366, 768), (390, 844), (375, 740)]
PHONES = [size for size in SIZES if size[0] < 720]

_MISSES = (Path(__file__).parent / "reach.js").read_text(encoding="utf-8")


def out_of_reach(page: Any) -> list[str]:
    """Everything a person must reach on the game screen and cannot, at this window size."""
    misses: list[str] = page.evaluate(_MISSES)
    return misses


def check_every_size(page: Any, where: str) -> None:
    """The hand, CONFIRM and any TAKE in reach at each of the four window sizes, in turn."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        misses = out_of_reach(page)
        assert not misses, f"{where} at {width}×{height}: {misses}"


def stems_visible(page: Any) -> bool:
    box = page.evaluate(
        "() => { const r = document.querySelector('.stems').getBoundingClientRect();"
        " return [r.top, r.bottom, innerHeight]; }"
    )
    return bool(box[0] >= 0 and box[1] <= box[2])
