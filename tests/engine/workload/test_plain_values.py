"""swf.plain_values (one regular expression for a line's 18 numbers, used by the extended readers) reads
what _to_number reads field by field, or declines and leaves the line to that check."""

from __future__ import annotations

import math
import random

import pytest

from engine.workload.swf import _to_number, plain_values

FORMS = ["0", "7", "-1", "+5", "00", "1.5", "-2.50", ".5", "5.", "1e3", "1E-2", "-0", "1e999", "9223372036854775808",
         "9223372036854775807", "nan", "inf", "1_000", "0x10", "١", "²", "5a", "--5", "-", "", "12345678901234567890.5"]


@pytest.mark.parametrize("seed", range(5))
def test_the_same_values_or_declined(seed):
    rng = random.Random(seed)
    taken = declined = 0
    for _ in range(3000):
        fields = [rng.choice(FORMS) if rng.random() < 0.05 else str(rng.randint(-1, 10 ** 6)) for _ in range(18)]
        fields += ["{1,2}", "q", "1:ppn=2"]
        slow = [_to_number(text) for text in fields[:18]]
        fast = plain_values(fields)
        if fast is None:
            declined += 1
            assert any(value is None for value in slow)     # a line that reads field by field is taken
            continue
        taken += 1
        assert all(value is not None and math.isfinite(value) for value in slow)
        assert fast == slow and [math.copysign(1, v) for v in fast] == [math.copysign(1, v) for v in slow]

    assert taken > 100 and declined > 100


def test_every_field_that_reads_alone_reads_in_a_line():
    for form in FORMS:
        fields = ["1"] * 17 + [form]
        if _to_number(form) is not None:
            assert plain_values(fields) == [1.0] * 17 + [_to_number(form)]
        else:
            assert plain_values(fields) is None
