"""The e2e game flows on the cluster (issue 46): the tests of tests/e2e, imported whole, run
against this folder's `database_url` (a database on the coordinator, its tables distributed)
through the e2e fixtures (`client`, `anon`, `ada`: the app with its clock thread running).

Solo games played to the end and again; online tables joined, filled with bees, left mid-game
and played again; buy-ins (the stakes, the pot, refunds, coins conserved: `wallets_add_up`
folds every wallet's stream); the server's verification and `swarm audit` of an exported game
(deal commitment, fingerprint, chain, replay), a tampered and a forged export caught."""

from __future__ import annotations

from tests.e2e.test_coins import *  # noqa: F403
from tests.e2e.test_fair_deal import *  # noqa: F403
from tests.e2e.test_online_tables import *  # noqa: F403
from tests.e2e.test_solo_api import *  # noqa: F403
from tests.e2e.test_solo_game import *  # noqa: F403
from tests.e2e.test_tamper_v2 import *  # noqa: F403
