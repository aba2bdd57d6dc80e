"""Declared task parameters: defaults, types, limits, choices and unknown keys."""

from __future__ import annotations

import pytest

from models.errors import InputError
from models.ops.params import Param, read_params

SPEC = {"rows": Param("int", minimum=1), "eps": Param("number", 1e-6, minimum=0),
        "x": Param("tensor", "{task}.X"), "fn": Param("str", "silu", choices=("silu", "relu"))}


def test_defaults_are_filled_and_tensor_names_use_the_task() -> None:
    assert read_params(SPEC, {"rows": 4}, "t7", "$", "<w>") == {
        "rows": 4, "eps": 1e-6, "x": "t7.X", "fn": "silu"}


@pytest.mark.parametrize(("raw", "path"), [
    ({}, "$"), ({"rows": True}, "$.rows"), ({"rows": 0}, "$.rows"),
    ({"rows": 1, "eps": "small"}, "$.eps"), ({"rows": 1, "fn": "tanh"}, "$.fn"),
    ({"rows": 1, "x": ""}, "$.x"), ({"rows": 1, "colour": 2}, "$.colour")])
def test_bad_parameters_name_their_path(raw: dict, path: str) -> None:
    with pytest.raises(InputError) as caught:
        read_params(SPEC, raw, "t", "$", "<w>")
    assert (caught.value.path, caught.value.rule) == (path, "FORMAT")
