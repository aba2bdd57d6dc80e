from schedsearch.engine.placement import PlacementBuffer, first_fit_offset, validate_placement
from schedsearch.engine.placement.greedy import ORDERS, greedy_portfolio
from tests.engine.placement.helpers import guillotine


def test_first_fit_takes_the_lowest_aligned_hole():
    placed = [(PlacementBuffer("a", 0, 4, 4), 0), (PlacementBuffer("b", 0, 4, 4), 12),
              (PlacementBuffer("later", 5, 9, 64), 0)]
    assert first_fit_offset(PlacementBuffer("x", 2, 5, 8), placed) == 4
    assert first_fit_offset(PlacementBuffer("y", 2, 5, 8, align=8), placed) == 16
    assert first_fit_offset(PlacementBuffer("z", 2, 5, 9), placed) == 16
    assert first_fit_offset(PlacementBuffer("z", 2, 5, 9), placed, capacity=24) is None


def test_every_order_gives_a_legal_placement():
    buffers = guillotine(seed=5, cuts=50)
    for name in ORDERS:
        offsets, peak, label = greedy_portfolio(buffers, orders=[name])
        assert validate_placement(buffers, offsets) == [], label
        assert peak == max(offsets[b.id] + b.size for b in buffers)
