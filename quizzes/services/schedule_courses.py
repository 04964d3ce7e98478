"""Each recall schedule carries its item's course (the due queue counts by it): these move it
when an item, or a lesson it belongs to, moves to another course. The admin's saves come here;
the importer never moves items or lessons across courses."""

from __future__ import annotations

from django.db import transaction

from courses.models import Lesson
from quizzes.models import QuizItem, RecallSchedule


def schedules_follow_lessons(*, lesson_ids: list[int], course_id: int) -> None:
    """Registered with courses.course_moves: the lessons' items now belong to `course_id`."""
    RecallSchedule.objects.filter(item__lesson_id__in=lesson_ids).update(course_id=course_id)


def quiz_item_save(*, item: QuizItem) -> QuizItem:
    """Save the item; if it moves to a lesson of another course, its schedules follow."""
    with transaction.atomic():
        course_id = None
        if item.pk is not None:
            row = (
                QuizItem.objects.filter(pk=item.pk)
                .values_list("lesson_id", "lesson__module__course_id")
                .first()
            )
            if row is not None and row[0] != item.lesson_id:
                course_id = Lesson.objects.values_list("module__course_id", flat=True).get(
                    pk=item.lesson_id
                )
                course_id = course_id if course_id != row[1] else None
        item.save()
        if course_id is not None:
            RecallSchedule.objects.filter(item=item).update(course_id=course_id)
    return item
