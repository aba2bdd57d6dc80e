"""The painted last writes (:mod:`checker.rules.last_write`) against the direct scan of
:mod:`checker.rules.values`, on random accesses to one buffer."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from checker.rules.last_write import Seen, Tie, last_writes
from checker.rules.values import _conflicts, _conflicts_few, _last_write, _Touch


@st.composite
def touches(draw: st.DrawFn, max_size: int) -> list[_Touch]:
    out = []
    for _ in range(draw(st.integers(0, max_size))):
        lo = draw(st.integers(0, 7))
        start = draw(st.integers(0, 6))
        out.append(_Touch(f"op{draw(st.integers(0, 5))}", lo, draw(st.integers(lo + 1, 8)),
                          start, start + draw(st.integers(0, 3)), None))
    return out


@given(reads=touches(6), writes=touches(8))
@example(reads=[_Touch("op0", 0, 1, 0, 0, None)],  # a tie with the reader's own write
         writes=[_Touch("op0", 0, 1, 0, 0, None), _Touch("op1", 0, 1, 0, 0, None)])
def test_painting_agrees_with_the_scan(reads: list[_Touch], writes: list[_Touch]) -> None:
    writes = sorted(writes, key=lambda w: w.end)
    ends = [w.end for w in writes]
    for read, answer in zip(reads, last_writes(reads, writes), strict=True):
        scanned = _last_write(read, writes, ends)
        if answer == "own":
            assert any(w.op == read.op and w.end <= read.start for w in writes)
        elif answer is None:
            assert scanned == "no write to them ends by then"
        elif isinstance(answer, Tie):
            assert isinstance(scanned, str) and "both finish" in scanned
        else:
            assert isinstance(answer, Seen) and scanned is writes[answer.write]


@given(reads=touches(6), writes=touches(8))
def test_the_interval_sweep_agrees_with_comparing_every_pair(reads: list[_Touch],
                                                             writes: list[_Touch]) -> None:
    """The writes during a read, found by the sweep over live intervals and pairwise."""
    swept, paired = _conflicts(reads, writes), _conflicts_few(reads, writes)
    assert swept.keys() == paired.keys()
    for i, w in swept.items():
        r = reads[i]
        assert w.op != r.op and w.lo < r.hi and r.lo < w.hi
