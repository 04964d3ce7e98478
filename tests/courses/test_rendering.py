"""Lesson Markdown rendering: tables, highlighted code, and sanitising that content cannot beat."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from courses.models import Lesson
from courses.services.content_toml import toml_key_lines
from courses.services.rendering import html_sanitise, markdown_render
from tests.factories import LessonFactory


def _lesson_form(
    lesson: Lesson, *, position: int, body_markdown: str, prefix: str = ""
) -> dict[str, object]:
    """The admin's lesson fields for `lesson` with a new position and body, as POST data."""
    fields = {
        "position": position,
        "title": lesson.title,
        "slug": lesson.slug,
        "objective": lesson.objective,
        "decision": "",
        "estimated_minutes": 10,
        "body_markdown": body_markdown,
    }
    return {f"{prefix}{name}": value for name, value in fields.items()}


def test_script_tags_and_javascript_links_never_survive() -> None:
    """Raw <script>, event handlers and javascript: URLs are removed, in Markdown or in HTML."""
    markdown = (
        "Hello <script>alert(1)</script>\n\n"
        "[click](javascript:alert(2)) and [ok](https://example.com)\n\n"
        '<a href="javascript:alert(3)" onclick="x()">raw</a>\n'
    )
    html = markdown_render(text=markdown)
    tags = re.findall(r"<[^>]+>", html)  # raw HTML in Markdown is escaped text, not tags
    assert not [t for t in tags if "script" in t or "javascript:" in t or "onclick" in t]
    assert '<a href="https://example.com" rel="noopener noreferrer">ok</a>' in html

    # nh3 itself has the last word, even on HTML that did not come through the parser.
    dirty = (
        '<p>x</p><script>alert(1)</script><a href="javascript:alert(1)">bad</a>'
        '<img src=x onerror="alert(1)"><table><tr><td style="color:red">1</td></tr></table>'
    )
    clean = html_sanitise(html=dirty)
    assert "<script" not in clean and "alert" not in clean
    assert "javascript:" not in clean
    assert "<img" not in clean and "style=" not in clean
    assert "<td>1</td>" in clean


def test_tables_are_real_tables_wrapped_for_scrolling() -> None:
    """A pipe table becomes a <table> with a header row, inside a horizontal-scroll wrapper."""
    html = markdown_render(text="| A | B |\n|---|---|\n| 1 | 2 |\n")
    assert html.startswith('<div class="table-wrap" tabindex="0" role="region"')
    assert "<th>A</th>" in html and "<td>2</td>" in html


def test_fenced_python_is_highlighted_and_unknown_languages_are_escaped() -> None:
    """Python gets Pygments spans; an unknown language falls back to escaped plain code."""
    python = markdown_render(text="```python\nx = 1  # note\n```\n")
    assert '<pre class="highlight" tabindex="0"><code class="language-python">' in python
    assert '<span class="c1"># note</span>' in python
    other = markdown_render(text="```nosuchlang\n<b>x</b>\n```\n")
    assert "&lt;b&gt;x&lt;/b&gt;" in other and "<b>" not in other


def test_toml_key_lines_follow_arrays_of_tables_and_skip_multiline_strings() -> None:
    """Each key is mapped to its line, with array indices, ignoring text inside \"\"\" strings."""
    text = (
        "[course]\n"  # 1
        'summary = """\n'  # 2
        "fake = 1\n"  # 3 (inside the string)
        '"""\n'  # 4
        "[[modules]]\n"  # 5
        'slug = "a"\n'  # 6
        "[[modules.lessons]]\n"  # 7
        'slug = "l1"\n'  # 8
        "[[modules]]\n"  # 9
        "[[modules.lessons]]\n"  # 10
        "[[modules.lessons]]\n"  # 11
        'file = "x.md"\n'  # 12
    )
    lines = toml_key_lines(text)
    assert lines[("course", "summary")] == 2
    assert ("course", "fake") not in lines
    assert lines[("modules", 0, "slug")] == 6
    assert lines[("modules", 0, "lessons", 0, "slug")] == 8
    assert lines[("modules", 1, "lessons", 0)] == 10
    assert lines[("modules", 1, "lessons", 1, "file")] == 12


@pytest.mark.django_db
def test_admin_save_rerenders_the_lesson_body(client: Client) -> None:
    """Editing a lesson's Markdown in the admin updates its HTML through the same renderer."""
    admin = get_user_model().objects.create_superuser(email="admin@example.com", password="pw")
    lesson = LessonFactory(body_markdown="Old", body_html="<p>Old</p>")
    client.force_login(admin)
    url = reverse("admin:courses_lesson_change", args=[lesson.pk])
    response = client.post(
        url,
        {
            "module": lesson.module_id,
            **_lesson_form(
                lesson,
                position=0,
                body_markdown="| A |\n|---|\n| 1 |\n\n<script>alert(1)</script>",
            ),
        },
    )
    assert response.status_code == 302, response.content[:2000]
    lesson = Lesson.objects.get(pk=lesson.pk)
    assert "<table>" in lesson.body_html
    assert "<script" not in lesson.body_html


@pytest.mark.django_db
def test_admin_pages_for_courses_modules_and_lessons_render(client: Client) -> None:
    """The admin lists and edits courses, modules (with their lessons inline) and lessons."""
    admin = get_user_model().objects.create_superuser(email="admin@example.com", password="pw")
    lesson = LessonFactory()
    client.force_login(admin)
    for name, obj in [
        ("course", lesson.module.course),
        ("module", lesson.module),
        ("lesson", lesson),
    ]:
        assert client.get(reverse(f"admin:courses_{name}_changelist")).status_code == 200
        change = client.get(reverse(f"admin:courses_{name}_change", args=[obj.pk]))
        assert change.status_code == 200
    module_page = client.get(reverse("admin:courses_module_change", args=[lesson.module.pk])).text
    assert lesson.title in module_page  # the inline lesson


@pytest.mark.django_db
def test_lesson_edited_inline_on_its_module_is_rerendered(client: Client) -> None:
    """Saving a module with an edited inline lesson renders that lesson's Markdown too."""
    admin = get_user_model().objects.create_superuser(email="admin@example.com", password="pw")
    lesson = LessonFactory(body_markdown="Old", body_html="<p>Old</p>")
    module = lesson.module
    client.force_login(admin)
    response = client.post(
        reverse("admin:courses_module_change", args=[module.pk]),
        {
            "course": module.course_id,
            "slug": module.slug,
            "title": module.title,
            "position": module.position,
            "lessons-TOTAL_FORMS": 1,
            "lessons-INITIAL_FORMS": 1,
            "lessons-MIN_NUM_FORMS": 0,
            "lessons-MAX_NUM_FORMS": 1000,
            "lessons-0-id": lesson.pk,
            "lessons-0-module": module.pk,
            **_lesson_form(lesson, position=3, body_markdown="New **bold**", prefix="lessons-0-"),
        },
    )
    assert response.status_code == 302, response.content[:3000]
    lesson = Lesson.objects.get(pk=lesson.pk)
    assert (lesson.position, lesson.body_html) == (3, "<p>New <strong>bold</strong></p>\n")
