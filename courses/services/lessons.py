"""Writes for lessons edited by hand (the admin): keep the rendered body in step with the source."""

from __future__ import annotations

from courses.models import Lesson
from courses.services.rendering import markdown_render


def lesson_save(*, lesson: Lesson) -> Lesson:
    """Render the lesson's Markdown to sanitised HTML, then save it."""
    lesson.body_html = markdown_render(text=lesson.body_markdown)
    lesson.save()
    return lesson
