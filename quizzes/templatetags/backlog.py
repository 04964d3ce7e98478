"""`queue.counts|backlog`: how many reviews wait over the daily limits, and how many days
catching up takes (arithmetic on the counts already read; no query)."""

from __future__ import annotations

from django import template

from quizzes.selectors.backlog import Backlog, backlog_of
from quizzes.selectors.queue import QueueCounts

register = template.Library()


@register.filter(name="backlog")
def backlog_filter(counts: QueueCounts) -> Backlog:
    return backlog_of(counts.courses)
