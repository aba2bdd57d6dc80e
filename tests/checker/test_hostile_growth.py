"""The work ``schedcheck`` does on each hostile family of
``benchmarks/bench_checker_adversarial.py`` grows linearly with its size (issue 29).

Counted in function calls (:func:`count_calls`), not seconds: the count is the same at
any load, and a pass over all pairs of ops, or over all corners of a box, multiplies it
by 16 or more per 4x, where every pass the checker has multiplies it by about 4.
"""

from __future__ import annotations

import pytest

from benchmarks.bench_checker_adversarial import FAMILIES, count_calls

#: Above a linear pass's 4x (an ``n log n`` sort in Python gives 4.2x at these sizes),
#: far below a quadratic one's 16x.
MOST_GROWTH = 5.0


@pytest.mark.parametrize("mode", ["verify", "verify-program"])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_calls_grow_about_fourfold_per_fourfold_size(family: str, mode: str) -> None:
    small_ops, small = count_calls(family, 500, mode)
    large_ops, large = count_calls(family, 2000, mode)
    assert large_ops >= 4 * small_ops - 4
    assert large / small <= MOST_GROWTH, (family, mode, small, large)
