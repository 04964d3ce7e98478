"""The top bar kept per process: the same markup as the template it replaced, for every role,
section, language and script prefix, and from the first request on a page."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import AnonymousUser
from django.template import Context, Engine
from django.test import Client
from django.urls import get_script_prefix, set_script_prefix
from django.utils import translation

from accounts.models import User
from home.navigation import SECTION_PREFIXES

pytestmark = pytest.mark.django_db

# base.html's top bar before it was written in Python: the reference.
_TEMPLATE_NAV = """{% load i18n %}  <a class="skip-link" href="#main">{% translate "Skip to content" %}</a>
  <header class="site-header">
    <nav class="top-bar" aria-label="{% translate 'Main' %}">
      <a class="brand" href="{% url 'home' %}">Recall</a>
      <ul class="sections">
        {% if user.is_authenticated %}
          <li><a href="{% url 'dashboard' %}"{% if current_section == "dashboard" %} aria-current="page"{% endif %}>{% translate "Dashboard" %}</a></li>
          <li><a href="{% url 'courses:catalogue' %}"{% if current_section == "courses" %} aria-current="page"{% endif %}>{% translate "Courses" %}</a></li>
          <li><a href="{% url 'quizzes:session' %}"{% if current_section == "review" %} aria-current="page"{% endif %}>{% translate "Review" %}</a></li>
          <li><a href="{% url 'quizzes:stats' %}"{% if current_section == "statistics" %} aria-current="page"{% endif %}>{% translate "Statistics" %}</a></li>
          <li><a href="{% url 'planner:calculator' %}"{% if current_section == "calculator" %} aria-current="page"{% endif %}>{% translate "Calculator" %}</a></li>
          <li><a href="{% url 'planner:cards' %}"{% if current_section == "cards" %} aria-current="page"{% endif %}>{% translate "Workload cards" %}</a></li>
          <li><a href="{% url 'capstone:list' %}"{% if current_section == "capstone" %} aria-current="page"{% endif %}>{% translate "Capstone" %}</a></li>
          {% if is_instructor %}
            <li><a href="{% url 'courses:teaching' %}"{% if current_section == "teaching" %} aria-current="page"{% endif %}>{% translate "Teaching" %}</a></li>
            <li><a href="{% url 'capstone:grading_queue' %}"{% if current_section == "grading" %} aria-current="page"{% endif %}>{% translate "Grading" %}</a></li>
            <li><a href="{% url 'reminders:status' %}"{% if current_section == "reminders" %} aria-current="page"{% endif %}>{% translate "Reminders" %}</a></li>
          {% endif %}
          <li><a href="{% url 'preferences' %}"{% if current_section == "preferences" %} aria-current="page"{% endif %}>{% translate "Preferences" %}</a></li>
          </ul>
          <form method="post" action="{% url 'account_logout' %}" class="inline logout">
            {% csrf_token %}
            <button type="submit" class="link">{% translate "Log out" %}</button>
          </form>
        {% else %}
          <li><a href="{% url 'account_login' %}"{% if current_section == "login" %} aria-current="page"{% endif %}>{% translate "Log in" %}</a></li>
          <li><a href="{% url 'account_signup' %}"{% if current_section == "signup" %} aria-current="page"{% endif %}>{% translate "Sign up" %}</a></li>
          </ul>
        {% endif %}
    </nav>
  </header>
"""
SECTIONS = ["", *sorted({section for _, section in SECTION_PREFIXES})]


def _normalised(html: str) -> str:
    return re.sub(r">\s+<", "><", html).strip()


def _both(context: dict[str, object]) -> tuple[str, str]:
    engine = Engine.get_default()
    fresh = engine.from_string(_TEMPLATE_NAV).render(Context(context))
    kept = engine.from_string("{% load site_nav %}{% site_nav %}").render(Context(context))
    return _normalised(fresh), _normalised(kept)


@pytest.mark.parametrize("language", ["en-gb", "de", "fr"])
@pytest.mark.parametrize("role", ["learner", "instructor", "visitor"])
def test_kept_bar_equals_a_fresh_render(language: str, role: str, learner: User) -> None:
    """Every section marked in turn, each role's links, the CSRF token (or none) and the
    language's labels: markup for markup what the template tags wrote."""
    user = AnonymousUser() if role == "visitor" else learner
    marked: set[str] = set()
    with translation.override(language):
        for section in SECTIONS:
            for token in ("tok<en>&1", None):
                fresh, kept = _both(
                    {
                        "user": user,
                        "is_instructor": role == "instructor",
                        "current_section": section,
                        "csrf_token": token,
                    }
                )
                assert kept == fresh
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
    """A bar kept for one language is not served in another (Django's catalogue translates
    "Log out")."""
    context = {"user": learner, "is_instructor": False, "current_section": "review"}
    with translation.override("de"):
        german = _both(context)[1]
    english = _both(context)[1]
    assert "Abmelden" in german
    assert "Log out" in english and "Abmelden" not in english


def test_links_follow_the_script_prefix(learner: User) -> None:
    """A site served under a prefix links under it, and the bar kept without one is not reused."""
    context = {"user": learner, "is_instructor": True, "current_section": "grading"}
    before = get_script_prefix()
    try:
        set_script_prefix("/recall/")
        fresh, kept = _both(context)
    finally:
        set_script_prefix(before)
    assert kept == fresh
    assert 'href="/recall/review/"' in kept
    assert 'href="/review/"' in _both(context)[1]


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
