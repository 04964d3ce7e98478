"""The top bar's sections, and which one a request's path belongs to (marked aria-current)."""

from __future__ import annotations

from django.http import HttpRequest

# Longest prefixes first: the first match wins.
SECTION_PREFIXES: tuple[tuple[str, str], ...] = (
    ("/dashboard/", "dashboard"),
    ("/courses/teaching/", "teaching"),
    ("/review/teaching/", "teaching"),
    ("/courses/", "courses"),
    ("/review/stats/", "statistics"),
    ("/review/retention/", "statistics"),
    ("/review/", "review"),
    ("/planner/cards/", "cards"),
    ("/planner/", "calculator"),
    ("/capstone/grading/", "grading"),
    ("/capstone/", "capstone"),
    ("/reminders/", "reminders"),
    ("/accounts/preferences/", "preferences"),
    ("/accounts/login/", "login"),
    ("/accounts/signup/", "signup"),
)


def section_for(path: str) -> str:
    """The section a path is in; a course's rubric and grade export belong to grading."""
    if path.startswith("/capstone/courses/") and ("/rubric/" in path or path.endswith(".csv")):
        return "grading"
    return next((section for prefix, section in SECTION_PREFIXES if path.startswith(prefix)), "")


def current_section(request: HttpRequest) -> dict[str, str]:
    return {"current_section": section_for(request.path)}
