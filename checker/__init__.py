"""Independent legality checker for ``npu-schedule/1`` files.

It reads the file and its own code only: nothing from ``schedsearch`` or ``models`` is
imported, so a bug shared with the search cannot hide a violation. Use
:func:`verify` on a parsed document or :func:`verify_file` on a path; the ``schedcheck``
command (:mod:`checker.cli`) wraps both.
"""

from checker.load import MAX_INPUT_BYTES, UnusableInput, parse_json, read_json
from checker.report import CODES, Report, Violation
from checker.verify import verify, verify_file

__all__ = ["CODES", "MAX_INPUT_BYTES", "Report", "UnusableInput", "Violation", "parse_json",
           "read_json", "verify", "verify_file"]
