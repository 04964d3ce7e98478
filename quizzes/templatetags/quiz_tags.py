"""Template tags for quiz items shown inside lesson pages."""

from __future__ import annotations

from typing import Any

from django import template

from courses.models import Lesson

register = template.Library()


@register.inclusion_tag("quizzes/_check_yourself.html", takes_context=True)
def check_yourself(context: dict[str, Any], lesson: Lesson) -> dict[str, Any]:
    """The lesson's "check yourself" items, answerable in place."""
    return {"lesson": lesson, "items": list(lesson.quiz_items.prefetch_related("choices"))}
