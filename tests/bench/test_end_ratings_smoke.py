"""A short run of `tests.bench.end_ratings`: a rated game's end view's ratings read against the
rest of the view, at two history lengths (one call a slice), so the bench keeps running."""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.bench.end_ratings import run


async def test_the_end_ratings_bench_measures_both_at_each_history(
    database_url: str, tmp_path: Path
) -> None:
    args = argparse.Namespace(
        history=[1, 3], rounds=1, calls=1, database_url=database_url, json=tmp_path / "x.json"
    )
    result = await run(args)
    assert list(result["levels"]) == ["1", "3"]
    for level in result["levels"].values():
        for figure in ("ms_ratings", "ms_whole_streams", "ms_baseline"):
            assert level[figure]["median"] > 0, (figure, level)
        assert level["ratings_over_baseline"]["rounds"] == 1
        assert level["whole_streams_over_baseline"]["rounds"] == 1
