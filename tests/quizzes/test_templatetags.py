"""How a due time is said: never "0 minutes"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from quizzes.templatetags.recall_time import due_phrase

NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("offset", "said"),
    [
        (timedelta(seconds=-5), "now"),
        (timedelta(0), "now"),
        (timedelta(seconds=1), "in under a minute"),
        (timedelta(seconds=59), "in under a minute"),
        (timedelta(seconds=60), "in 1\xa0minute"),
        (timedelta(minutes=10, seconds=30), "in 10\xa0minutes"),
        (timedelta(days=2, hours=3), "in 2\xa0days, 3\xa0hours"),
    ],
)
def test_due_phrase(offset, said):
    """Where `timeuntil` says "0 minutes" (under a minute, or past), the learner reads "in under
    a minute" or "now"."""
    assert due_phrase(NOW + offset, NOW) == said


def test_due_phrase_of_nothing_is_empty():
    assert due_phrase(None, NOW) == ""
