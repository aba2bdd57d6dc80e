"""What the mix command imports before its first search: not CP-SAT (which imports
pandas, 0.2 s of CPU at any limit), since a short limit gives every problem its list
schedule alone and never searches. A fresh process, counted modules, no timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_mix_command_imports_neither_cp_sat_nor_pandas() -> None:
    probe = ("import sys, schedsearch.commands.mix, schedsearch.mix.serve; "
             "print(sorted(m for m in ('ortools.sat.python.cp_model', 'pandas', "
             "'schedsearch.engine.cpsat', 'schedsearch.engine.search') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "[]"
