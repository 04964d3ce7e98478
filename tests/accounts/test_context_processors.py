"""The role in every page's context: right for each role, and looked up once per request at most."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.context_processors import ROLE_SESSION_KEY
from quizzes.models import RecallSchedule
from quizzes.services.review import schedule_start
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db


def _group_queries(ctx: CaptureQueriesContext) -> int:
    return sum(1 for query in ctx.captured_queries if "auth_group" in query["sql"])


def _sign_in_with_no_kept_role(client, user) -> None:
    """Signed in, with the role that sign-in keeps taken out of the session: the pages must ask."""
    client.force_login(user)
    session = client.session
    del session[ROLE_SESSION_KEY]
    session.save()


def test_instructor_sees_teaching_links_learner_does_not(client, learner, instructor):
    """The navigation offers teaching pages to instructors only."""
    teaching = reverse("courses:teaching")
    client.force_login(instructor)
    assert f'href="{teaching}"' in client.get(reverse("planner:calculator")).content.decode()
    client.force_login(learner)
    assert f'href="{teaching}"' not in client.get(reverse("planner:calculator")).content.decode()


def test_a_page_that_tests_the_role_twice_asks_once(client, instructor):
    """The calculator page reads the role in the navigation and beside its save form: one query."""
    _sign_in_with_no_kept_role(client, instructor)
    with CaptureQueriesContext(connection) as ctx:
        html = client.get(reverse("planner:calculator")).content.decode()
    assert "Show to everyone as an example" in html
    assert _group_queries(ctx) == 1


def test_htmx_fragments_that_never_show_the_role_do_not_ask(client, learner):
    """Revealing a review card (an htmx fragment) costs no group query; the full page costs one."""
    c = course_with_items(learner=learner)
    schedule_start(
        learner=learner,
        item=c.recall,
        card_token=uuid.uuid4(),
        rating=1,
        now=timezone.now() - timedelta(days=1),
    )
    schedule = RecallSchedule.objects.get()
    _sign_in_with_no_kept_role(client, learner)
    with CaptureQueriesContext(connection) as page:
        assert client.get(reverse("quizzes:session")).status_code == 200
    with CaptureQueriesContext(connection) as fragment:
        response = client.get(
            reverse("quizzes:session"),
            {"reveal": 1, "schedule": schedule.pk, "token": str(schedule.card_token)},
            HTTP_HX_REQUEST="true",
        )
    assert response.status_code == 200 and 'data-testid="grade-3"' in response.content.decode()
    assert (_group_queries(page), _group_queries(fragment)) == (1, 0)
