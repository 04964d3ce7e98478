"""A recall prompt as the learner sees it: a calculated item's with the numbers drawn for them."""

from __future__ import annotations

from django import template

from quizzes.calculated import PLACEHOLDER_RE, schedule_problem
from quizzes.models import QuizItem, RecallSchedule

register = template.Library()


@register.filter
def item_prompt(schedule: RecallSchedule) -> str:
    """The schedule's item's prompt; a calculated item's drawn for the schedule's learner at its
    reps, the problem its prompt page grades. Reads the loaded item: no query."""
    item = schedule.item
    if item.kind != QuizItem.Kind.CALCULATED:
        return item.prompt
    return schedule_problem(schedule).prompt


@register.filter
def prompt_outline(prompt: str) -> str:
    """A calculated item's template as a list shows it, with its variables named, not drawn:
    "A [gpu] holds [model] at [precision]" (a plain prompt is returned as it is)."""
    return PLACEHOLDER_RE.sub(lambda m: "[" + m.group(1).replace("_", " ") + "]", prompt)
