"""The README's Python example runs as written (docs that match the code)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
#: The examples' search time limits, cut to one second here: the calls, their keywords and
#: the legality of the answer are what this test checks, and a legal schedule does not
#: depend on the limit (the README's 10 s made this the suite's slowest test).
TIME_LIMIT = re.compile(r"time_limit=\d+(\.\d*)?")


def test_readme_python_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README shows the library in use"
    for block in blocks:
        fast = TIME_LIMIT.sub("time_limit=1", block)
        exec(compile(fast, str(README), "exec"), {})  # noqa: S102 - our own README
