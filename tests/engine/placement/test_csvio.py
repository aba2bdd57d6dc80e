import os

import pytest

from models.errors import InputError
from schedsearch.engine.placement import PlacementBuffer, parse_csv, read_csv, write_csv


def test_minimalloc_csv_is_read():
    buffers = parse_csv("id,lower,upper,size\n0,0,3,2\n1,2,5,2\n\n")
    assert buffers == [PlacementBuffer("0", 0, 3, 2), PlacementBuffer("1", 2, 5, 2)]


def test_alignment_and_offset_columns_in_any_order():
    buffers = parse_csv("id,lower,upper,size,offset,alignment\nx,1,4,8,16,8\ny,0,2,3,,1\n"
                        .replace(",,1", ",0,1"))
    assert buffers[0] == PlacementBuffer("x", 1, 4, 8, align=8, offset=16)
    assert buffers[1].offset == 0


@pytest.mark.parametrize("text, path, fragment", [
    ("id,lower,upper,size\n0,0,3\n", "line 2", "columns"),
    ("id,lower,upper,size\n0,0,3,2\n1,0,x,2\n", "line 3", "integer"),
    ("id,lower,upper,size\n0,0,3,-2\n", "line 2", "size"),
    ("id,lower,upper,size\n0,5,3,2\n", "line 2", "upper"),
    ("id,lower,upper,size,alignment,offset\n0,0,3,2,4,6\n", "line 2", "multiple"),
    ("id,lower,upper,size\n0,0,3,2\n0,4,5,2\n", "$['0']", "duplicate"),
    ("id,lower,upper,bytes\n0,0,3,2\n", "line 1", "unknown column"),
    ("id,lower,upper\n0,0,3\n", "line 1", "missing column"),
    ("", "line 1", "empty"),
])
def test_bad_csv_names_the_line_and_rule(text, path, fragment):
    with pytest.raises(InputError) as caught:
        parse_csv(text, "in.csv")
    error = caught.value
    assert (error.source, error.path, error.rule) == ("in.csv", path, "FORMAT")
    assert fragment in error.message


def test_round_trip_and_no_temporary_left(tmp_path):
    buffers = [PlacementBuffer("a", 0, 3, 2, align=2), PlacementBuffer("b", 1, 2, 1)]
    target = tmp_path / "out.csv"
    write_csv(target, buffers, {"a": 4, "b": 0})
    back = read_csv(target)
    assert [(b.id, b.align, b.offset) for b in back] == [("a", 2, 4), ("b", 1, 0)]
    assert os.listdir(tmp_path) == ["out.csv"]


def test_unreadable_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        read_csv(tmp_path / "missing.csv")
