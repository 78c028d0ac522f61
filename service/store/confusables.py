"""Unicode's confusables (TS #39 `confusables.txt`, shipped in `data/`), read once, for the
account-name key in `service.domain.names`. The file is Unicode's, unchanged: its header gives
its version; replace it with a newer one to follow Unicode."""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def prototypes() -> dict[str, str]:
    """Each confusable character → its prototype (lines `source ; prototype ; MA # ...`)."""
    text = resources.files(__package__ or "service.store").joinpath("data/confusables.txt")
    table: dict[str, str] = {}
    for line in text.read_text("utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 2:
            continue
        source = "".join(chr(int(cp, 16)) for cp in fields[0].split())
        target = "".join(chr(int(cp, 16)) for cp in fields[1].split())
        if len(source) == 1:
            table[source] = target
    return table
