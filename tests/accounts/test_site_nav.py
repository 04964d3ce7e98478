"""The top bar: each role's links, the page's section marked, the active language's labels and
the site's script prefix."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.template.loader import get_template
from django.test import Client
from django.urls import get_script_prefix, set_script_prefix
from django.utils import translation

from accounts.models import User
from home.navigation import SECTION_PREFIXES

pytestmark = pytest.mark.django_db

SECTIONS = ["", *sorted({section for _, section in SECTION_PREFIXES})]


def _bar(context: dict[str, object]) -> str:
    """base.html's top bar as this context renders it."""
    page = get_template("base.html").render(context)
    return page[page.index('<header class="site-header">') : page.index("</header>")]


@pytest.mark.parametrize("language", ["en-gb", "de", "fr"])
@pytest.mark.parametrize("role", ["learner", "instructor", "visitor"])
def test_each_section_is_marked_for_its_role(language: str, role: str, learner: User) -> None:
    """Every section marked in turn, alone, among the links the role has, with the logout
    form's CSRF token for a signed-in user."""
    user = AnonymousUser() if role == "visitor" else learner
    marked: set[str] = set()
    with translation.override(language):
        for section in SECTIONS:
            for token in ("tok<en>&1", None):
                kept = _bar(
                    {
                        "user": user,
                        "is_instructor": role == "instructor",
                        "current_section": section,
                        "csrf_token": token,
                    }
                )
                if token and role != "visitor":
                    assert 'value="tok&lt;en&gt;&amp;1"' in kept
                assert kept.count('aria-current="page"') <= 1
                if 'aria-current="page"' in kept:
                    marked.add(section)
    expected = {
        "visitor": {"login", "signup"},
        "learner": {
            "dashboard",
            "courses",
            "review",
            "statistics",
            "calculator",
            "cards",
            "capstone",
            "preferences",
        },
    }
    expected["instructor"] = expected["learner"] | {"teaching", "grading", "reminders"}
    assert marked == expected[role]


def test_labels_follow_the_active_language(learner: User) -> None:
    """Django's catalogue translates "Log out"."""
    context = {"user": learner, "is_instructor": False, "current_section": "review"}
    with translation.override("de"):
        german = _bar(context)
    english = _bar(context)
    assert "Abmelden" in german
    assert "Log out" in english and "Abmelden" not in english


def test_links_follow_the_script_prefix(learner: User) -> None:
    """A site served under a prefix links under it."""
    context = {"user": learner, "is_instructor": True, "current_section": "grading"}
    before = get_script_prefix()
    try:
        set_script_prefix("/recall/")
        prefixed = _bar(context)
    finally:
        set_script_prefix(before)
    assert 'href="/recall/review/"' in prefixed
    assert 'href="/review/"' in _bar(context)


def test_pages_mark_their_section_and_show_the_role(client: Client, instructor: User) -> None:
    """Through the site: an instructor's review page marks Review and offers the teaching links;
    a visitor's login page marks Log in."""
    page = client.get("/accounts/login/").content.decode()
    assert 'aria-current="page">Log in</a>' in page
    assert "Log out" not in page
    client.force_login(instructor)
    page = client.get("/review/").content.decode()
    assert page.count('aria-current="page"') == 1
    assert 'href="/review/" aria-current="page">Review</a>' in page
    assert ">Grading</a>" in page and 'name="csrfmiddlewaretoken"' in page
