"""The bench driver's arithmetic (bench/driver.py): ratios are medians of
per-round ratios, so a round where the machine ran slow moves both sides."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import driver  # noqa: E402


def test_ratio_median_pairs_rounds():
    # round 2 ran at half speed on both sides: its ratio is still 2
    assert driver.ratio_median([2.0, 4.0, 2.0], [1.0, 2.0, 1.0]) == 2.0
    # a round missing on either side is left out
    assert driver.ratio_median([2.0, None, 9.0], [1.0, 1.0, None]) == 2.0
    assert driver.ratio_median([None], [1.0]) is None


def test_per_byte_ratio_is_per_round_and_per_byte():
    # 100x the bytes in 120x the time, each round, whatever the round's speed
    times = [120.0, 240.0, 130.0]
    ref = [1.0, 2.0, 1.0]
    r = driver.per_byte_ratio(times, 100, ref, 1)
    assert abs(r - 1.2) < 1e-9
    # the median of the rounds' ratios (1.0, 1.0, 1.5), not the ratio of
    # the medians (150 / 100 = 1.5)
    times = [100.0, 300.0, 150.0]
    ref = [1.0, 3.0, 1.0]
    assert abs(driver.per_byte_ratio(times, 100, ref, 1) - 1.0) < 1e-9
    # a round that failed on one size does not pair with another round
    assert abs(driver.per_byte_ratio([None, 110.0], 100, [1.0, 1.0], 1) - 1.1) < 1e-9


def test_per_byte_ratios_lists_each_round():
    rs = driver.per_byte_ratios([100.0, None, 300.0], 100, [1.0, 1.0, 2.0], 1)
    assert [round(r, 9) for r in rs] == [1.0, 1.5]
    assert driver.per_byte_ratio([None], 100, [1.0], 1) is None
