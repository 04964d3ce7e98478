"""Writes for lessons and modules edited by hand (the admin): keep the rendered body in step with
the source, and what other apps keep per course with a lesson that moves to another course."""

from __future__ import annotations

from django.db import transaction

from courses.course_moves import lessons_moved
from courses.models import Lesson, Module
from courses.services.rendering import markdown_render


def _moved_to(lesson: Lesson) -> int | None:
    """The lesson's new course if this save moves it to a module of another course."""
    if lesson.pk is None:
        return None
    before = Lesson.objects.filter(pk=lesson.pk).values_list("module_id", "module__course_id")
    row = before.first()
    if row is None or row[0] == lesson.module_id:
        return None
    course_id = Module.objects.values_list("course_id", flat=True).get(pk=lesson.module_id)
    return course_id if course_id != row[1] else None


def lesson_save(*, lesson: Lesson) -> Lesson:
    """Render the lesson's Markdown to sanitised HTML, then save it (and, if it moves to another
    course, what other apps keep for it)."""
    lesson.body_html = markdown_render(text=lesson.body_markdown)
    with transaction.atomic():
        course_id = _moved_to(lesson)
        lesson.save()
        if course_id is not None:
            lessons_moved(lesson_ids=[lesson.pk], course_id=course_id)
    return lesson


def module_save(*, module: Module) -> Module:
    """Save the module; if it moves to another course, its lessons' keep moves with it."""
    with transaction.atomic():
        before = None
        if module.pk is not None:
            before = Module.objects.filter(pk=module.pk).values_list("course_id", flat=True).first()
        module.save()
        if before is not None and before != module.course_id:
            lesson_ids = list(module.lessons.values_list("pk", flat=True))
            lessons_moved(lesson_ids=lesson_ids, course_id=module.course_id)
    return module
