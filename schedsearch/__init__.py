"""Search static schedules for NPU engines: ``solve(problem, target, ...) -> Schedule``."""

from schedsearch.api import solve

__all__ = ["solve"]
