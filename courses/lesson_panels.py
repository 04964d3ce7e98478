"""What apps above courses add to a lesson page below its body (the quizzes app's check-yourself
items). Courses cannot import those apps, so each registers a panel from its AppConfig.ready(),
and the lesson view renders whatever is registered: the queries run in the view, not in a
template tag."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest
from django.utils.safestring import SafeString, mark_safe

from courses.models import Lesson

# A panel renders its HTML for one learner's view of one lesson.
LessonPanel = Callable[[HttpRequest, Lesson], str]

_panels: list[LessonPanel] = []


def lesson_panel_register(panel: LessonPanel) -> None:
    if panel not in _panels:
        _panels.append(panel)


def lesson_panels_render(*, request: HttpRequest, lesson: Lesson) -> list[SafeString]:
    # Each panel's HTML comes from a Django template, which escaped it already.
    return [mark_safe(panel(request, lesson)) for panel in _panels]
