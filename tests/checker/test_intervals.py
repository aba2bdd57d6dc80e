"""Live byte intervals (:mod:`checker.intervals`) against a plain list."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from checker.intervals import LiveIntervals

spans = st.lists(st.tuples(st.integers(0, 20), st.integers(1, 8))
                 .map(lambda s: (s[0], s[0] + s[1])), min_size=1, max_size=12)


@given(spans=spans, data=st.data())
def test_meeting_finds_a_live_intersecting_interval_iff_one_exists(spans, data) -> None:
    live = LiveIntervals(spans)
    alive: set[int] = set()
    for _ in range(data.draw(st.integers(1, 30))):
        k = data.draw(st.integers(0, len(spans) - 1))
        if data.draw(st.booleans()):
            live.add(k)
            alive.add(k)
        else:
            live.remove(k)
            alive.discard(k)
        lo = data.draw(st.integers(0, 28))
        hi = data.draw(st.integers(lo + 1, 30))
        found = live.meeting(lo, hi)
        meeting = {j for j in alive if spans[j][0] < hi and lo < spans[j][1]}
        assert (found is None) == (not meeting)
        assert found is None or found in meeting
