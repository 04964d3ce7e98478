"""The top bar marks the section a page belongs to."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import User
from home.navigation import section_for


@pytest.mark.parametrize(
    ("path", "section"),
    [
        ("/dashboard/", "dashboard"),
        ("/courses/", "courses"),
        ("/courses/gpus/what-a-gpu-is/", "courses"),
        ("/courses/teaching/gpus/", "teaching"),
        ("/review/", "review"),
        ("/review/stats/", "statistics"),
        ("/review/teaching/gpus/settings/", "teaching"),
        ("/planner/", "calculator"),
        ("/planner/cards/compare/", "cards"),
        ("/capstone/courses/gpus/worksheet/", "capstone"),
        ("/capstone/courses/gpus/rubric/", "grading"),
        ("/capstone/courses/gpus/grades.csv", "grading"),
        ("/capstone/grading/3/", "grading"),
        ("/reminders/", "reminders"),
        ("/accounts/preferences/", "preferences"),
        ("/healthz", ""),
    ],
)
def test_section_for_path(path: str, section: str) -> None:
    assert section_for(path) == section


@pytest.mark.django_db
def test_only_the_current_section_is_marked(client: Client, learner: User) -> None:
    client.force_login(learner)
    body = client.get("/review/stats/").content.decode()
    assert body.count('aria-current="page"') == 1
    assert 'aria-current="page">Statistics</a>' in body
