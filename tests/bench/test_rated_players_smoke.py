"""A short run of `tests.bench.rated_players` (issue 43's closing check at 200+ games): rated
games of people of three hidden strengths, every rating recomputed from the log."""

from __future__ import annotations

from service.usecases.ratings import recompute
from tests.bench.rated_players import STRENGTHS, report, run
from tests.in_memory import swarm_in_memory


async def test_rated_games_recompute_to_the_stored_ratings() -> None:
    swarm = swarm_in_memory(accounts_per_hour=0)
    outcome = await run(swarm, games=8, per_strength=2, seed=7)
    assert outcome.check.mismatches == [] and outcome.check.games == 8
    assert outcome.check.changes == sum(r.games for s in STRENGTHS for r in outcome.ratings[s])
    assert "mismatches" in report(outcome)
    # Recomputing again reads the same log and finds the same.
    again = await recompute(swarm.ctx, swarm.repository)
    assert (again.changes, again.mismatches) == (outcome.check.changes, [])
