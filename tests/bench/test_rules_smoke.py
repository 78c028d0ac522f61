"""A smoke test of `python -m tests.bench.rules --cpu --against DIR` (docs/benchmarks.md): the
CPU-time comparison runs its measurement on a checkout's code in processes of their own and
prints every figure for both sides. Speed is the benchmark's to measure, never asserted here."""

from __future__ import annotations

import pytest

from tests.bench import rules


def test_the_cpu_comparison_measures_every_figure_on_both_sides(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # This checkout against itself: one pair, one slice a figure.
    assert (
        rules.main(["--cpu", "--against", str(rules.ROOT), "--pairs", "1", "--repeats", "1"]) == 0
    )
    table = capsys.readouterr().out.splitlines()
    for name, *_ in rules.CPU_FIGURES:
        [row] = [line for line in table if line.startswith(name)]
        before, _, after, _, ratio = row[len(name) :].split()  # each side's median, then (min–max)
        assert float(before) > 0 and float(after) > 0 and float(ratio) > 0
