"""`make bench-citus` in miniature (tests/bench/citus.py): one round of one-second slices, four
writers, two HTTP clients. What it holds is the bench's own working, not its figures: every
mode appended, every Citus append was a router execution by Citus' own count, and a move was
answered over HTTP on both databases."""

from __future__ import annotations

from tests.bench import citus as bench


async def test_the_citus_bench_runs_in_miniature(citus_env: dict[str, str]) -> None:
    settings = bench.Settings(
        rounds=1,
        seconds=1.0,
        latency_seconds=0.5,
        clients=4,
        http_clients=2,
        http_seconds=1.0,
        games=2,
    )
    results = await bench.run(settings, plain_url=None)
    appends = results["appends"]
    for mode in bench.MODES:
        assert appends["loaded"][mode]["appends_per_s"]["median"] > 0, mode
        assert appends["alone"][mode]["appends_per_s"]["median"] > 0, mode
    statements = appends["statements"]
    assert statements["multi_shard"] == 0 and statements["single_shard"] > 0, statements
    # Through the coordinator: the delegated call, and the token check when there is one.
    two = appends["loaded"][bench.TWO]
    assert two["single_shard"]["median"] > 0
    for clients in ("1", "2"):
        for mode in (bench.PLAIN, bench.TWO):
            figures = results["http"][clients][mode]
            assert figures["moves_per_s"]["median"] > 0, (clients, mode)
            assert figures["errors"]["max"] == 0, (clients, mode)
    bench.print_report(results)
