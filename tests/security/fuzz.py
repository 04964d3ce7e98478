"""Hostile numbers for the fuzz tests: what an attacker, a typo or a broken client sends, and
values inside each field's range (so the engine itself runs on extremes too)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal

from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import strategies as st

from core.bounds import Bound
from tests.security.conftest import written_tables

# Far above any honest answer, far below the ~20 s the stall request took. Counted in this
# process's CPU time (the test client answers in-process), so a machine busy with other work
# does not make an honest answer look slow; a stall is CPU-bound and is caught all the same.
ANSWER_BOUND_S = 2.0

CLASSICS = [
    "1e-10000000",  # the stall request of issue 12
    "1e+10000000",
    "1e-1000000",
    "1e400",
    "-1e400",
    "1e-5000",
    "9" * 5000,
    "9" * 41,
    "1" + "0" * 39,
    "nan",
    "NaN",
    "-nan",
    "sNaN",
    "inf",
    "-Infinity",
    "1e308",
    "1.7976931348623157e308",
    "5e-324",
    "0",
    "-0",
    "0.0",
    "-1",
    "1e-30",
    "99999999999",
    "2000000000",
    "2147483648",
    "9223372036854775808",
    "1_000",
    "0x10",
    "١٢٣",  # Arabic-Indic digits: Decimal reads them
    "１２",  # full-width digits
    " 12 ",
    "12abc",
    "",
    " ",
    "1e",
    ".",
    "-",
    "+5",
    "5.",
    ".5",
    "1,5",
    "1e-9",
    "1e9",
    "<script>alert(1)</script>",
]

hostile = st.one_of(
    st.sampled_from(CLASSICS),
    st.text(max_size=60).filter(lambda s: "\x00" not in s),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers().map(str),
    st.integers(min_value=-(10**60), max_value=10**60).map(str),
    st.decimals(allow_nan=True, allow_infinity=True).map(str),
    st.from_regex(r"\A-?[0-9]{0,12}(\.[0-9]{0,12})?([eE][+-]?[0-9]{1,9})?\Z"),
)


def in_range(bound: Bound) -> st.SearchStrategy[str]:
    """Values the field accepts, edges included: the engine must survive every combination."""
    low = Decimal(0) if bound.allow_zero else bound.minimum
    if bound.integer:
        low = Decimal(0) if bound.allow_zero else max(Decimal(1), bound.minimum.to_integral_value())
        edges = [low, bound.maximum, bound.maximum - 1]
        inner = st.integers(min_value=int(low), max_value=int(bound.maximum)).map(str)
    else:
        edges = [low, bound.minimum, bound.maximum]
        inner = st.decimals(min_value=low, max_value=bound.maximum, allow_nan=False, places=6).map(
            lambda d: format(d, "f")
        )
    return st.one_of(st.sampled_from([format(e, "f") for e in edges]), inner)


def field_values(bounds: dict[str, Bound]) -> st.SearchStrategy[dict[str, str | None]]:
    """For each field: None (keep the baseline), a hostile value, or one in its range."""
    return st.fixed_dictionaries(
        {
            name: st.one_of(st.none(), hostile, in_range(bound))
            for name, bound in sorted(bounds.items())
        }
    )


class Tally:
    """How many generated values each field met, so a test can prove every field was fuzzed."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def add(self, values: dict[str, str | None]) -> None:
        self.seen.update(name for name, value in values.items() if value is not None)

    def assert_each_field_met(self, fields: list[str], at_least: int) -> None:
        short = {f: self.seen[f] for f in fields if self.seen[f] < at_least}
        assert not short, f"fields fuzzed fewer than {at_least} times: {short}"


@contextmanager
def answered_in_bound_without_writes(
    *, writes_allowed: Callable[[], bool] = lambda: False
) -> Iterator[CaptureQueriesContext]:
    """Time the block and capture its SQL: it must answer within ANSWER_BOUND_S of CPU and,
    unless `writes_allowed()` says the input was accepted, write no row."""
    started = time.process_time()
    with CaptureQueriesContext(connection) as queries:
        yield queries
    elapsed = time.process_time() - started
    assert elapsed < ANSWER_BOUND_S, f"answered in {elapsed:.2f} s of CPU"
    if not writes_allowed():
        assert not written_tables(queries), written_tables(queries)
