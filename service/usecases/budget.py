"""Work allowed per caller: a token bucket each, refilled evenly, for work that costs CPU on
this instance (the expert's analyses: `Exports`). A caller spends from it only for work done
(an answer already kept costs nothing); one that asks for more than its bucket holds is refused
before anything is done, and told how long until it holds enough (`Budget.wait`).

Per instance, in memory, on purpose: what it bounds is this instance's CPU. At most `MAX_KEYS`
buckets are held; the least recently used goes first (it comes back full, as it would once
refilled: pushing out one's own takes the work of `MAX_KEYS` other callers)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

MAX_KEYS = 20_000  # buckets held at once


class Budget:
    """`per_hour` units of work per key, refilled evenly (one every 3600/`per_hour` seconds),
    `burst` at most in hand; `per_hour` 0: no bound."""

    def __init__(
        self,
        per_hour: float,
        burst: float,
        *,
        max_keys: int = MAX_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = per_hour / 3600.0
        self.burst = burst
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key: (held, at)

    @property
    def bounded(self) -> bool:
        return self.rate > 0

    def held(self, key: str) -> float:
        """What `key` may spend now."""
        kept = self._buckets.get(key)
        if kept is None:
            return self.burst
        held, at = kept
        return min(self.burst, held + (self.clock() - at) * self.rate)

    def wait(self, key: str, cost: float) -> float:
        """Seconds until `key` holds `cost` (0: it does now)."""
        if not self.bounded or cost <= 0:
            return 0.0
        return max(0.0, cost - self.held(key)) / self.rate

    def take(self, key: str, cost: float) -> None:
        """Spend `cost` of `key`'s (after `wait` said 0)."""
        if self.bounded and cost > 0:
            self._set(key, self.held(key) - cost)

    def give_back(self, key: str, cost: float) -> None:
        """Return `cost` to `key` (work taken for and then not done)."""
        if self.bounded and cost > 0:
            self._set(key, min(self.burst, self.held(key) + cost))

    def _set(self, key: str, held: float) -> None:
        self._buckets[key] = (held, self.clock())
        self._buckets.move_to_end(key)
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
