"""``schedsearch mix``: the JSON shape, a legal ``-o`` schedule, a missed soft deadline named."""

from __future__ import annotations

import json

from checker.cli import main as schedcheck
from schedsearch import cli

MIX = """name = "cli-mix"
target = "hexagon-v75"
[[requests]]
name = "p0"
model = "qwen2.5-0.5b"
phase = "prefill"
tokens = 32
[[requests]]
name = "d0"
model = "qwen2.5-0.5b"
phase = "decode"
past = 32
deadline_us = 0.001
"""


def test_json_shape_schedule_and_missed_deadline(tmp_path, capsys, wall_never_binds) -> None:
    path, out, picture = tmp_path / "m.toml", tmp_path / "s.json", tmp_path / "p.png"
    path.write_text(MIX)
    argv = ["mix", str(path), "--json", "-o", str(out), "--plot", str(picture),
            "--time-limit", "0.05", "--reproducible", "--soft-deadlines"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert list(document) == ["policies"]
    assert list(document["policies"]) == ["sequential", "chunked", "searched"]
    for policy in document["policies"].values():
        assert isinstance(policy["makespan"], int)
        assert list(policy["requests"]) == ["p0", "d0"]
        assert policy["requests"]["p0"]["deadline_met"] is None
        assert policy["requests"]["d0"]["deadline_met"] is False  # 1 ns
        assert policy["requests"]["d0"]["end"] <= policy["makespan"]
        assert policy["decode_p50"] == policy["decode_p99"] == policy["requests"]["d0"]["end"]
        assert policy["legal"] is True
    assert document["policies"]["chunked"]["chunk"] is None  # 32 tokens: one chunk
    assert "misses the deadline of d0" in captured.err
    written = json.loads(out.read_text())
    assert written["makespan"] == document["policies"]["searched"]["device_makespan"]
    assert picture.stat().st_size > 0
    assert schedcheck(["verify", str(out)]) == 0


def test_one_request_is_counted_in_the_singular(tmp_path, capsys, wall_never_binds) -> None:
    path = tmp_path / "m.toml"
    path.write_text(MIX[:MIX.index("[[requests]]\nname = \"d0\"")])  # the prefill only
    assert cli.main(["mix", str(path), "--time-limit", "0.05", "--reproducible"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("cli-mix on hexagon-v75: 1 request; times in ")
