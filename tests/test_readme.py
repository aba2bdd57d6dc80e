"""The README's Python example runs as written (docs that match the code)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README shows the library in use"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})  # noqa: S102 - our own README
