"""One run's figure against a paper's claim: agree / partly / disagree, by hand-worked changes."""

from __future__ import annotations

import math

import pytest

from engine.metrics.claims import change_text, judge_difference, overall, relative_change


@pytest.mark.parametrize("a, b, direction, expected, status", [
    (10.0, 6.0, "lower", -0.4, "agree"),        # 40 % lower, as the paper's 40 %
    (10.0, 7.9, "lower", -0.4, "agree"),        # 21 % lower: at least half the paper's 40 %
    (10.0, 8.5, "lower", -0.4, "partly"),       # 15 % lower: the paper's way, under half its size
    (10.0, 9.95, "lower", None, "partly"),      # 0.5 % lower: within 1 %, about the same
    (10.0, 12.0, "lower", -0.4, "disagree"),    # 20 % higher
    (0.744, 0.758, "higher", None, "agree"),    # PLAN 3's utilization on LLNL (1.9 % higher)
    (5.0, 5.02, "same", None, "agree"),         # 0.4 %: the same
    (5.0, 6.0, "same", None, "disagree"),
    (0.0, 0.0, "lower", None, "partly"),        # no deadline missed under either
    (0.0, 3.0, "lower", None, "disagree"),      # misses from none
    (None, 3.0, "lower", None, "cannot tell"),
    (math.nan, 3.0, "lower", None, "cannot tell"),
])
def test_verdict_of_one_pair(a, b, direction, expected, status):
    verdict = judge_difference(a, b, direction, expected=expected)
    assert verdict["status"] == status
    assert (verdict["why"] == "") == (status == "agree")


def test_the_why_names_both_sizes():
    verdict = judge_difference(10.0, 8.5, "lower", expected=-0.4)
    assert verdict["relative"] == pytest.approx(-0.15)
    assert verdict["why"] == "the paper's way, but 15 % lower against the paper's 40 % lower: under half of it"
    assert judge_difference(2.0, 3.0, "lower")["why"] == "ours is 50 % higher, the paper found it lower"


def test_relative_change_and_its_words():
    assert relative_change(4.0, 3.0) == -0.25 and relative_change(0.0, 0.0) == 0.0
    assert relative_change(0.0, 2.0) == math.inf
    assert change_text(-0.25) == "25 % lower" and change_text(0.05) == "5.0 % higher"
    assert change_text(math.inf) == "higher (from 0)" and change_text(0.0) == "the same"


def test_a_claim_over_several_pairs():
    assert overall(["agree", "agree", "cannot tell"]) == "agree"
    assert overall(["disagree", "disagree"]) == "disagree"
    assert overall(["agree", "disagree", "agree"]) == "partly"
    assert overall(["agree", "partly"]) == "partly"
    assert overall(["cannot tell"]) == "cannot tell" and overall([]) == "cannot tell"


def test_an_unknown_direction_is_refused():
    with pytest.raises(ValueError, match="lower, higher or same"):
        judge_difference(1.0, 2.0, "better")
