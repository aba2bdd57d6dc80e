"""Strict JSON reading: the inputs Python's json module would accept but the formats forbid."""

from __future__ import annotations

import pytest

from models import jsonio
from models.errors import InputError
from models.jsonio import json_path, load_json_file, parse_json_text


@pytest.mark.parametrize(("text", "fragment"), [
    ("", "empty"),
    ("   \n", "empty"),
    ("{", "not valid JSON"),
    ('{"a": NaN}', "NaN"),
    ('{"a": Infinity}', "Infinity"),
    ('{"a": -Infinity}', "Infinity"),
    ('{"a": 1, "a": 2}', "duplicate key"),
    ("[" * 10_000 + "]" * 10_000, "nesting"),
])
def test_refused_texts(text: str, fragment: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_json_text(text, "x.json")
    assert fragment in caught.value.message
    assert str(caught.value).startswith("x.json: $: JSON: ")


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    assert parse_json_text('{"a": "' + "[" * 500 + '"}', "x.json") == {"a": "[" * 500}


def test_oversized_files_are_refused_before_reading(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(jsonio, "MAX_INPUT_BYTES", 10)
    big = tmp_path / "big.json"
    big.write_text('{"a": "0123456789"}')
    with pytest.raises(InputError) as caught:
        load_json_file(big)
    assert caught.value.rule == "SIZE"


def test_missing_file_and_binary_junk(tmp_path) -> None:
    with pytest.raises(InputError) as caught:
        load_json_file(tmp_path / "absent.json")
    assert caught.value.rule == "FILE"
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError) as caught:
        load_json_file(junk)
    assert "UTF-8" in caught.value.message


def test_json_path_quotes_names_that_are_not_identifiers() -> None:
    assert json_path("$", "ops") == "$.ops"
    assert json_path("$.ops", "g0.mm.0") == '$.ops["g0.mm.0"]'
    assert json_path("$.modes", 3) == "$.modes[3]"
