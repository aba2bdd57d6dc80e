"""Mix files: what is accepted, and one line naming file, JSON path and rule otherwise."""

from __future__ import annotations

import json

import pytest

from models.errors import InputError
from models.mix import load_mix, mix_from_dict
from schedsearch import cli

GOOD = {"name": "m", "target": "hexagon-v75", "requests": [
    {"name": "p0", "model": "qwen2.5-0.5b", "phase": "prefill", "tokens": 256},
    {"name": "d0", "model": "llama-3.2-1b", "phase": "decode", "past": 1024,
     "deadline_us": 1500, "weight": 2},
]}


def _with(**changes: object) -> dict:
    """GOOD with its second request changed (a value of None removes the key)."""
    request = {**GOOD["requests"][1], **changes}
    return {**GOOD, "requests": [GOOD["requests"][0],
                                 {k: v for k, v in request.items() if v is not None}]}


def test_a_good_mix_is_read_in_file_order_with_deadlines_in_ns() -> None:
    mix = mix_from_dict(GOOD, "m.json")
    assert [r.name for r in mix.requests] == ["p0", "d0"]
    prefill, decode = mix.requests
    assert (prefill.tokens, prefill.past, prefill.deadline_ns, prefill.weight) == \
        (256, 0, None, 1.0)
    assert (decode.tokens, decode.past, decode.deadline_ns, decode.weight) == \
        (1, 1024, 1_500_000, 2.0)


def test_toml_and_json_files_read_the_same(tmp_path) -> None:
    toml = tmp_path / "m.toml"
    toml.write_text('name = "m"\ntarget = "hexagon-v75"\n'
                    '[[requests]]\nname = "p0"\nmodel = "qwen2.5-0.5b"\nphase = "prefill"\n'
                    'tokens = 256\n[[requests]]\nname = "d0"\nmodel = "llama-3.2-1b"\n'
                    'phase = "decode"\npast = 1024\ndeadline_us = 1500\nweight = 2\n')
    data = tmp_path / "m.json"
    data.write_text(json.dumps(GOOD))
    assert load_mix(str(toml)).requests == load_mix(str(data)).requests


@pytest.mark.parametrize(("document", "path", "rule", "words"), [
    ([], "$", "FORMAT", "expected an object"),
    ({**GOOD, "format": "npu-workload/1"}, "$.format", "FORMAT", "not a mix"),
    ({**GOOD, "extra": 1}, "$.extra", "FORMAT", "unknown key"),
    ({k: v for k, v in GOOD.items() if k != "target"}, "$", "FORMAT", "'target'"),
    ({**GOOD, "requests": []}, "$.requests", "FORMAT", "non-empty"),
    (_with(name="p0"), "$.requests[1].name", "FORMAT", "duplicate"),
    (_with(name="d-0"), "$.requests[1].name", "FORMAT", "letters, digits or '_'"),
    (_with(model="gpt-9"), "$.requests[1].model", "FORMAT", "bundled families"),
    (_with(model="m.onnx"), "$.requests[1].model", "FILE", "no such ONNX model file"),
    (_with(phase="verify"), "$.requests[1].phase", "FORMAT", "prefill, decode"),
    (_with(past=None), "$.requests[1]", "FORMAT", "needs 'past'"),
    (_with(tokens=4), "$.requests[1].tokens", "FORMAT", "one token"),
    (_with(past=-1), "$.requests[1].past", "FORMAT", "integer >= 0"),
    (_with(past=True), "$.requests[1].past", "FORMAT", "integer >= 0"),
    (_with(deadline_us=0), "$.requests[1].deadline_us", "FORMAT", "> 0"),
    (_with(deadline_us="soon"), "$.requests[1].deadline_us", "FORMAT", "microseconds"),
    (_with(weight=-1), "$.requests[1].weight", "FORMAT", "> 0"),
    (_with(colour="red"), "$.requests[1].colour", "FORMAT", "unknown key"),
])
def test_bad_mixes_name_the_path_and_the_rule(document, path, rule, words) -> None:
    with pytest.raises(InputError) as caught:
        mix_from_dict(document, "m.json")
    assert (caught.value.source, caught.value.path, caught.value.rule) == ("m.json", path, rule)
    assert words in caught.value.message


def test_a_prefill_needs_tokens() -> None:
    prefill = {k: v for k, v in GOOD["requests"][0].items() if k != "tokens"}
    document = {**GOOD, "requests": [prefill]}
    with pytest.raises(InputError, match="needs 'tokens'"):
        mix_from_dict(document)


@pytest.mark.parametrize(("text", "rule"), [("name = ", "TOML"), (None, "FILE")])
def test_the_command_refuses_an_unreadable_mix_in_one_line(tmp_path, capsys, text,
                                                           rule) -> None:
    path = tmp_path / "m.toml"
    if text is not None:
        path.write_text(text)
    assert cli.main(["mix", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"schedsearch: error: {path}: $: {rule}: ")


def test_the_command_names_the_json_path_of_a_bad_request(tmp_path, capsys) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_with(model="m.onnx")))
    assert cli.main(["mix", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"schedsearch: error: {path}: $.requests[1].model: FILE: no such ONNX model file "
        f"'{tmp_path / 'm.onnx'}' (a path relative to the mix file's folder)\n")
