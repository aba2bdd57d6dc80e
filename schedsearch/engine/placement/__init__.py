"""Placement engine: buffers with fixed lifetimes -> offsets in one memory.

The sub-problem of the search in which every buffer's lifetime is already decided and
only its address remains. Public API:

- :class:`PlacementBuffer` (one buffer) and :func:`place` -> :class:`PlacementResult`,
  the offline engine (capacity mode, or minimise mode with ``capacity=None``);
- :func:`first_fit_offset`, the online helper for a list scheduler;
- :func:`read_csv` / :func:`write_csv`, MiniMalloc's CSV interchange format;
- :func:`validate_placement`, the engine's own vectorised validator, and
  :func:`placement_to_schedule_document`, which lets the project's checker judge a
  placement;
- :func:`max_load` / :func:`lower_bound`.

See docs/placement.md for the algorithms and the measured figures.
"""

from schedsearch.engine.placement.csvio import parse_csv, read_csv, write_csv
from schedsearch.engine.placement.engine import place
from schedsearch.engine.placement.greedy import first_fit_offset
from schedsearch.engine.placement.problem import (
    PlacementBuffer,
    PlacementResult,
    lower_bound,
    max_load,
)
from schedsearch.engine.placement.schedule import placement_to_schedule_document
from schedsearch.engine.placement.validate import PlacementViolation, validate_placement

__all__ = ["PlacementBuffer", "PlacementResult", "PlacementViolation", "place",
           "first_fit_offset", "read_csv", "parse_csv", "write_csv", "validate_placement",
           "placement_to_schedule_document", "max_load", "lower_bound"]
