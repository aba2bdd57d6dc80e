"""From a timed schedule to a program a runtime executes, and runs of it under noise.

- :func:`lower`: queues per lane unit and the fewest waits that keep every order the
  schedule's legality relies on (:mod:`.lower`, :mod:`.orders`);
- :class:`Program`, :func:`read_program`, :func:`program_to_dict`: ``npu-program/1``;
- :func:`simulate`: discrete-event runs with noisy durations and a fluid bus, under four
  runtime policies (:mod:`.simulate`, :mod:`.policies`).
"""

from schedsearch.program.lower import Lowering, lower, lower_report
from schedsearch.program.model import Program, program_from_dict, program_to_dict, read_program

__all__ = ["Lowering", "Program", "lower", "lower_report", "program_from_dict",
           "program_to_dict", "read_program"]
