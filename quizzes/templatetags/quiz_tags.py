"""Template tags for quiz items shown inside lesson pages."""

from __future__ import annotations

import uuid
from typing import Any

from django import template

from courses.models import Lesson
from quizzes.models import RecallSchedule

register = template.Library()


@register.inclusion_tag("quizzes/_check_yourself.html", takes_context=True)
def check_yourself(context: dict[str, Any], lesson: Lesson) -> dict[str, Any]:
    """The lesson's "check yourself" items, answerable in place (two queries, plus one per page)."""
    items = list(lesson.quiz_items.prefetch_related("choices").order_by("position", "id"))
    user = context.get("user") or getattr(context.get("request"), "user", None)
    scheduled: dict[int, RecallSchedule] = {}
    if user is not None and user.is_authenticated and items:
        scheduled = {
            s.item_id: s
            for s in RecallSchedule.objects.filter(learner=user, item__in=items).only(
                "id", "item_id", "due"
            )
        }
    return {
        "lesson": lesson,
        "entries": [(item, uuid.uuid4(), scheduled.get(item.pk)) for item in items],
        "csrf_token": context.get("csrf_token"),
        # The item-focus script is loaded from the partial; CSP needs the page's nonce.
        "csp_nonce": context.get("csp_nonce"),
        "request": context.get("request"),
        "user": user,
    }
