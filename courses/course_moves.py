"""What apps above courses keep per course and must move with a lesson that changes course (the
quizzes app's recall schedules). Courses cannot import those apps, so each registers a listener
from its AppConfig.ready(), and the course services that move lessons call them in the move's
transaction."""

from __future__ import annotations

from collections.abc import Callable

# A listener moves what it keeps for these lessons to their new course.
LessonsMoved = Callable[..., None]

_listeners: list[LessonsMoved] = []


def lessons_moved_register(listener: LessonsMoved) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def lessons_moved(*, lesson_ids: list[int], course_id: int) -> None:
    for listener in _listeners:
        listener(lesson_ids=lesson_ids, course_id=course_id)
