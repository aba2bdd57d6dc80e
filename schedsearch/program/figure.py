"""A picture of a policy study: each policy's makespan distribution (empirical CDF) under
the same noise, with the static makespan as a vertical line."""

from __future__ import annotations

import os

import numpy as np

from schedsearch import output
from schedsearch.program.stats import Study
from schedsearch.wording import counted

__all__ = ["plot_study"]


def plot_study(study: Study, path: str | os.PathLike[str], title: str = "",
               time_unit: str = "ns") -> None:
    """Write the CDFs of ``study``'s makespans to ``path`` (format from the suffix); the
    makespans are in the target's ``time_unit``."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8.0, 4.5))
    ax = figure.add_subplot()
    for result in study.results:
        values = np.sort(result.makespans)
        ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post",
                label=f"{result.policy.value} (P99 {result.percentile(99):,.0f})")
    ax.axvline(study.static_makespan, color="black", linestyle="--",
               label=f"static makespan {study.static_makespan:,}")
    ax.set_xlabel(f"makespan ({time_unit})")
    ax.set_ylabel("share of runs")
    ax.set_title(title or f"{counted(study.runs, 'run')}, jitter {study.jitter}, seed {study.seed}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    figure.tight_layout()
    image_format = output.image_format(path)
    output.write_with(path, lambda stream: figure.savefig(stream, format=image_format,
                                                          dpi=150))
