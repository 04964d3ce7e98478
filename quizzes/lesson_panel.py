"""The quizzes app's panel on a lesson page: its check-yourself items, answerable in place."""

from __future__ import annotations

import uuid

from django.http import HttpRequest
from django.template.loader import render_to_string

from courses.models import Lesson
from quizzes.models import RecallSchedule


def check_yourself_panel(request: HttpRequest, lesson: Lesson) -> str:
    """The lesson's items with the learner's recall schedule for each (two queries)."""
    items = list(lesson.quiz_items.prefetch_related("choices").order_by("position", "id"))
    scheduled: dict[int, RecallSchedule] = {}
    if request.user.is_authenticated and items:
        scheduled = {
            s.item_id: s
            for s in RecallSchedule.objects.filter(learner=request.user, item__in=items).only(
                "id", "item_id", "due"
            )
        }
    context = {
        "lesson": lesson,
        "entries": [(item, uuid.uuid4(), scheduled.get(item.pk)) for item in items],
    }
    return render_to_string("quizzes/_check_yourself.html", context, request=request)
