"""tests/e2e/test_game_paid.py on the cluster: what a buy-in game paid, the pot split, refunds
of an abandoned game (its timers fired by a second instance's claim), and transfers cut short
left in the outbox and delivered by the relay (`relay_due`). A module of its own: its `clock`
and `timed` fixtures are not test_turn_clock's."""

from __future__ import annotations

from tests.e2e.test_game_paid import *  # noqa: F403
