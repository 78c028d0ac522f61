"""`make race` on the cluster (tests/e2e/test_racing_moves.py imported whole): eight people at
one table on two app instances, both running the turn clock, every turn's taps and confirms
sent within 50 ms; every move applied or refused for a rule, never for a race (`conflict`),
each in the game's log once. `make test-citus` races SWARM_RACE_GAMES games (1 by default),
`make race-citus` 7 (over 1,000 moves), as `make race` does on one PostgreSQL."""

from __future__ import annotations

from tests.e2e.test_racing_moves import *  # noqa: F403
