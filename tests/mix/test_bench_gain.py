"""``benchmarks/bench_mix.py``'s split of the searched policy's gain: entry, overlap,
chunking, from the candidates it weighed."""

from __future__ import annotations

from benchmarks.bench_mix import gain


def _tried(label: str, chunk: int | None, makespan: int) -> dict:
    return {"candidate": label, "chunk": chunk, "makespan": makespan, "lateness": 0}


def test_the_gain_is_entry_then_overlap_then_chunking() -> None:
    figures = {"policies": {
        "sequential": {"makespan": 1000}, "chunked": {"makespan": 1200},
        "searched": {"makespan": 820, "tried": [
            _tried("whole prefills", None, 850),
            _tried("whole prefills, per-request search", None, 820),
            _tried("prefill in chunks of 64", 64, 870),
            _tried("the sequential kernels' schedule, fused", None, 900),
            _tried("the chunked kernels' schedule, fused", 64, 1100),
            _tried("the sequential policy itself", None, 1000),
            _tried("the chunked policy itself", 64, 1200)]}}}
    split = gain(figures)
    assert split["entry"] == 100  # 1000 -> 900: one entry
    assert split["overlap"] == 80  # 900 -> 820: the best whole-prefill search
    assert split["chunking"] == -50  # the best chunked search, 870, is longer
    assert split["entry"] + split["overlap"] == 1000 - split["searched_whole"]
