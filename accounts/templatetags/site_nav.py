"""The top bar, written in Python with its links kept per process: ten {% url %} and twelve
{% translate %} tags were a quarter of a full page's rendering. The links are reversed and
translated once per language, script prefix and URLconf (what reverse() and gettext depend
on); the section marked current, the role's links and the logout form's CSRF token are
filled in per request. The same markup and escaping as the template it replaces."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext, gettext_noop

register = template.Library()

# (section, URL name, label); the section is what home.navigation.section_for calls the page.
LEARNER_LINKS = (
    ("dashboard", "dashboard", gettext_noop("Dashboard")),
    ("courses", "courses:catalogue", gettext_noop("Courses")),
    ("review", "quizzes:session", gettext_noop("Review")),
    ("statistics", "quizzes:stats", gettext_noop("Statistics")),
    ("calculator", "planner:calculator", gettext_noop("Calculator")),
    ("cards", "planner:cards", gettext_noop("Workload cards")),
    ("capstone", "capstone:list", gettext_noop("Capstone")),
)
INSTRUCTOR_LINKS = (
    ("teaching", "courses:teaching", gettext_noop("Teaching")),
    ("grading", "capstone:grading_queue", gettext_noop("Grading")),
    ("reminders", "reminders:status", gettext_noop("Reminders")),
)
ACCOUNT_LINKS = (("preferences", "preferences", gettext_noop("Preferences")),)
VISITOR_LINKS = (
    ("login", "account_login", gettext_noop("Log in")),
    ("signup", "account_signup", gettext_noop("Sign up")),
)

# A link as (section, its markup before and after the aria-current slot).
Link = tuple[str, str, str]


class _Bar:
    """One language's and URLconf's top bar, every part but the per-request ones rendered."""

    def __init__(self, urlconf: Any) -> None:
        def links(entries: tuple[tuple[str, str, str], ...]) -> tuple[Link, ...]:
            return tuple(
                (
                    section,
                    f'<li><a href="{escape(reverse(name, urlconf=urlconf))}"',
                    f">{escape(gettext(label))}</a></li>",
                )
                for section, name, label in entries
            )

        self.head = (
            f'<a class="skip-link" href="#main">{escape(gettext("Skip to content"))}</a>\n'
            '<header class="site-header">\n'
            f'<nav class="top-bar" aria-label="{escape(gettext("Main"))}">\n'
            f'<a class="brand" href="{escape(reverse("home", urlconf=urlconf))}">Recall</a>\n'
            '<ul class="sections">\n'
        )
        self.learner = links(LEARNER_LINKS)
        self.instructor = links(INSTRUCTOR_LINKS)
        self.account = links(ACCOUNT_LINKS)
        self.visitor = links(VISITOR_LINKS)
        # Log out sits after the sections, outside their row: where the row scrolls sideways (a
        # phone, or 200 % text) it stays in view (WCAG 1.4.10).
        self.logout = (
            "</ul>\n"
            f'<form method="post" action="{escape(reverse("account_logout", urlconf=urlconf))}"'
            ' class="inline logout">\n'
        )
        self.logout_end = (
            f'\n<button type="submit" class="link">{escape(gettext("Log out"))}</button>\n</form>\n'
        )
        self.list_end = "</ul>\n"
        self.tail = "</nav>\n</header>"


_BARS: dict[tuple[object, ...], _Bar] = {}


def _bar() -> _Bar:
    urlconf = get_urlconf()
    key = (get_language(), get_script_prefix(), urlconf)
    bar = _BARS.get(key)
    if bar is None:
        bar = _BARS[key] = _Bar(urlconf)
    return bar


def _rendered(links: tuple[Link, ...], current: str) -> list[str]:
    mark = ' aria-current="page"'
    return [
        f"{before}{mark if section == current else ''}{after}\n" for section, before, after in links
    ]


def _csrf_input(token: object) -> str:
    # What {% csrf_token %} writes: nothing when the view gave no token.
    if not token or token == "NOTPROVIDED":
        return ""
    return str(format_html('<input type="hidden" name="csrfmiddlewaretoken" value="{}">', token))


@register.simple_tag(takes_context=True)
def site_nav(context: template.Context) -> SafeString:
    """The skip link and the top bar: a signed-in user's sections (an instructor's too) and the
    logout form, or a visitor's log in and sign up; the page's section marked aria-current."""
    bar = _bar()
    current = str(context.get("current_section") or "")
    parts = [bar.head]
    user = context.get("user")
    if user is not None and user.is_authenticated:
        parts += _rendered(bar.learner, current)
        if context.get("is_instructor"):
            parts += _rendered(bar.instructor, current)
        parts += _rendered(bar.account, current)
        parts += [bar.logout, _csrf_input(context.get("csrf_token")), bar.logout_end]
    else:
        parts += _rendered(bar.visitor, current)
        parts.append(bar.list_end)
    parts.append(bar.tail)
    return mark_safe("".join(parts))  # every value in it was escaped above
