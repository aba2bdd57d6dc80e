from schedsearch.engine.placement import PlacementBuffer, validate_placement


def codes(violations):
    return sorted((v.code, v.buffers) for v in violations)


def test_legal_placement_has_no_violation():
    buffers = [PlacementBuffer("a", 0, 4, 4), PlacementBuffer("b", 2, 6, 4),
               PlacementBuffer("c", 4, 8, 4)]
    assert validate_placement(buffers, {"a": 0, "b": 4, "c": 0}, 8) == []


def test_every_alias_is_reported_with_both_buffers():
    buffers = [PlacementBuffer("a", 0, 4, 4), PlacementBuffer("b", 2, 6, 4),
               PlacementBuffer("c", 3, 8, 4), PlacementBuffer("d", 6, 9, 4)]
    found = codes(validate_placement(buffers, {"a": 0, "b": 2, "c": 3, "d": 3}))
    assert found == [("ALIAS", ("a", "b")), ("ALIAS", ("a", "c")), ("ALIAS", ("b", "c")),
                     ("ALIAS", ("c", "d"))]


def test_touching_lifetimes_and_empty_buffers_do_not_alias():
    buffers = [PlacementBuffer("a", 0, 2, 4), PlacementBuffer("b", 2, 4, 4),
               PlacementBuffer("empty", 0, 4, 0), PlacementBuffer("dead", 1, 1, 4)]
    assert validate_placement(buffers, {"a": 0, "b": 0, "empty": 1, "dead": 0}) == []


def test_range_alignment_pin_and_missing():
    buffers = [PlacementBuffer("a", 0, 2, 4, align=4), PlacementBuffer("b", 0, 2, 4),
               PlacementBuffer("p", 3, 4, 1, offset=2), PlacementBuffer("m", 0, 1, 1)]
    found = codes(validate_placement(buffers, {"a": 6, "b": 0, "p": 3}, 9))
    assert found == [("ALIGN", ("a",)), ("MISSING", ("m",)), ("PINNED", ("p",)),
                     ("RANGE", ("a",))]
