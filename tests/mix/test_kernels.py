"""Separate kernels solved once per content (:mod:`schedsearch.mix.kernels`): counted
solves, not timings."""

from __future__ import annotations

import pytest

from checker import verify
from models.formats import schedule_to_dict
from models.mix import Mix, Request
from models.requests import mix_problem
from models.targets import load_target
from schedsearch.engine.search import solve
from schedsearch.mix.kernels import KernelCache, kernel_key, kernel_problems, renamed
from schedsearch.mix.policies import CHUNK_TOKENS, run_policies
from schedsearch.paths import SolveOptions

TARGET = load_target("hexagon-v75")
QWEN = "qwen2.5-0.5b"
MAX_OPS = 100_000


def _mix(*decode_pasts: int) -> Mix:
    return Mix("t", TARGET.name, (Request("p0", QWEN, "prefill", 16, 0),
                                  *(Request(f"d{i}", QWEN, "decode", 1, past)
                                    for i, past in enumerate(decode_pasts))))


def _distinct(*problems) -> int:
    return len({kernel_key(kernel, mp.part_of[task].prefix)
                for mp in problems for task, kernel in kernel_problems(mp).items()})


def test_identical_kernels_are_solved_once(wall_never_binds) -> None:
    """Three decodes of one past are one layer under three names: with a fourth of
    another past, the kernel policies solve the prefill's 14 kernels, the 14 of the
    decodes of 16 past and, of the decode of 32 past, only those whose content depends
    on the past; the number of searches is the number of distinct kernels."""
    solved: list[str] = []

    def search(problem, target, grant):
        if len(problem.tasks) == 1:
            solved.append(next(iter(problem.tasks)))
        return solve(problem, target, time_limit=0.01)

    mix = _mix(16, 16, 16, 32)
    whole = mix_problem(mix, TARGET, None, MAX_OPS)
    chunked = mix_problem(mix, TARGET, CHUNK_TOKENS, MAX_OPS)
    # a limit whose grants pay for every search (the searches here ignore their grants)
    runs = run_policies(whole, TARGET, search, SolveOptions(time_limit=1000.0), MAX_OPS)
    d0 = {t.removeprefix("d0-") for t in whole.problem.tasks if t.startswith("d0-")}
    past_bound = {t.removeprefix("d3-") for t in solved if t.startswith("d3-")}
    assert {t.removeprefix("d0-") for t in solved if t.startswith("d0-")} == d0
    assert not [t for t in solved if t.startswith(("d1-", "d2-"))]
    assert past_bound and past_bound < d0  # the projections do not depend on the past
    assert len(solved) == len(set(solved)) == 14 + 14 + len(past_bound)
    assert len(solved) == _distinct(whole, chunked)
    for run in runs.values():
        assert verify(schedule_to_dict(run.schedule)).legal, run.name


def test_a_cached_schedule_renamed_is_the_same_schedule_of_the_other_kernel() -> None:
    mp = mix_problem(_mix(16, 16), TARGET, None, MAX_OPS)
    kernels = kernel_problems(mp)
    first, second = kernels["d0-o_proj"], kernels["d1-o_proj"]
    assert kernel_key(first, "d0") == kernel_key(second, "d1")
    assert kernel_key(first, "d0") != kernel_key(kernels["d0-q_proj"], "d0")
    cache = KernelCache.of([mp], lambda problem, target, weight, key:
                           solve(problem, target, time_limit=0.01))
    schedule = cache(first, TARGET)
    again = cache(second, TARGET)
    assert cache.solves == 1
    assert again.problem is second and set(again.ops) == set(second.ops)
    assert [(p.start, p.end, p.mode) for p in again.ops.values()] == \
        [(p.start, p.end, p.mode) for p in schedule.ops.values()]
    assert verify(schedule_to_dict(again)).legal
    with pytest.raises(ValueError, match="not .* renamed"):
        renamed(schedule, kernels["d1-q_proj"], "d0", "d1")


def test_a_kernel_the_other_chunking_keyed_is_compared_not_keyed_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The decodes are the same kernels in both chunkings: the chunked mix keys only the
    kernels the whole one lacks (the prefill's chunks), and every key is the one keying
    gives."""
    from schedsearch.mix import kernels as module

    mix = _mix(16, 16)
    whole = mix_problem(mix, TARGET, None, MAX_OPS)
    chunked = mix_problem(mix, TARGET, 8, MAX_OPS)
    sequential = module.MixKernels.of(whole)
    keyed: list[str] = []

    def counted(kernel, prefix):
        keyed.append(next(iter(kernel.tasks)))
        return kernel_key(kernel, prefix)

    monkeypatch.setattr(module, "kernel_key", counted)
    kernels = module.MixKernels.of(chunked, known=sequential)
    assert keyed and all(chunked.part_of[task].request == "p0" for task in keyed)
    assert len(keyed) == sum(part.request == "p0" for part in chunked.part_of.values())
    assert kernels.keys == {task: kernel_key(kernel, chunked.part_of[task].prefix)
                            for task, kernel in kernel_problems(chunked).items()}
