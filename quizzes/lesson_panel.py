"""The quizzes app's panel on a lesson page: its check-yourself items, answerable in place."""

from __future__ import annotations

import uuid

from django.http import HttpRequest
from django.template.loader import render_to_string

from courses.models import Lesson
from quizzes.models import RecallSchedule
from quizzes.services.answers import lesson_problem


def check_yourself_panel(request: HttpRequest, lesson: Lesson) -> str:
    """The lesson's items with the learner's recall schedule for each (two queries), and for a
    calculated item the lesson's problem: the first review's draw before the first answer, a
    practice draw after it (never the numbers the next review will ask)."""
    items = list(lesson.quiz_items.prefetch_related("choices").order_by("position", "id"))
    scheduled: dict[int, RecallSchedule] = {}
    if request.user.is_authenticated and items:
        scheduled = {
            s.item_id: s
            for s in RecallSchedule.objects.filter(learner=request.user, item__in=items).only(
                "id", "item_id", "due", "reps"
            )
        }
    learner_id = request.user.pk or 0
    entries = []
    for item in items:
        schedule = scheduled.get(item.pk)
        reps = schedule.reps if schedule is not None else None
        problem = lesson_problem(learner_id=learner_id, item=item, reps=reps)
        entries.append((item, uuid.uuid4(), schedule, problem))
    context = {"lesson": lesson, "entries": entries}
    return render_to_string("quizzes/_check_yourself.html", context, request=request)
