"""The role the navigation shows is kept in the session from sign-in for a short while: pages ask
no group query, a role change still reaches the links, and access is always checked afresh."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.context_processors import ROLE_LIFETIME_SECONDS, ROLE_SESSION_KEY
from accounts.models import User
from accounts.services import INSTRUCTORS_GROUP, user_make_instructor
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TEACHING = reverse("courses:teaching")


def _group_queries(ctx: CaptureQueriesContext) -> int:
    return sum(1 for query in ctx.captured_queries if "auth_group" in query["sql"])


def _shows_teaching(client: Client) -> bool:
    html = client.get(reverse("quizzes:stats")).content.decode()
    return f'href="{TEACHING}"' in html


def _age_the_kept_role(client: Client, seconds: int) -> None:
    session = client.session
    user_id, role, checked_at = session[ROLE_SESSION_KEY]
    session[ROLE_SESSION_KEY] = [user_id, role, checked_at - seconds]
    session.save()


def test_the_role_is_asked_at_sign_in_not_per_page(client: Client, learner: User) -> None:
    """Signing in asks the group query once and keeps the role; the session's pages ask none."""
    with CaptureQueriesContext(connection) as sign_in:
        client.force_login(learner)
    with CaptureQueriesContext(connection) as pages:
        assert not _shows_teaching(client)
        assert not _shows_teaching(client)
    assert (_group_queries(sign_in), _group_queries(pages)) == (1, 0)


def test_a_session_without_a_kept_role_asks_on_its_first_page(
    client: Client, learner: User
) -> None:
    """A session signed in before roles were kept at sign-in asks once, then keeps the role."""
    client.force_login(learner)
    session = client.session
    del session[ROLE_SESSION_KEY]
    session.save()
    with CaptureQueriesContext(connection) as first:
        assert not _shows_teaching(client)
    with CaptureQueriesContext(connection) as second:
        assert not _shows_teaching(client)
    assert (_group_queries(first), _group_queries(second)) == (1, 0)


def test_a_promotion_reaches_the_links_once_the_kept_role_expires(
    client: Client, learner: User
) -> None:
    """Made an instructor, the learner reaches the teaching pages at once and sees their link
    within the role's lifetime."""
    client.force_login(learner)
    assert not _shows_teaching(client)
    user_make_instructor(user=learner)
    assert client.get(TEACHING).status_code == 200  # access is never read from the session
    _age_the_kept_role(client, ROLE_LIFETIME_SECONDS)
    assert _shows_teaching(client)


def test_a_demotion_closes_access_at_once_and_the_links_later(client: Client) -> None:
    """Taken out of the Instructors group, the user gets 403 at once; the link goes when the
    kept role expires."""
    user = UserFactory()
    user_make_instructor(user=user)
    client.force_login(user)
    assert _shows_teaching(client)
    user.groups.remove(Group.objects.get(name=INSTRUCTORS_GROUP))
    assert client.get(TEACHING).status_code == 403
    _age_the_kept_role(client, ROLE_LIFETIME_SECONDS)
    assert not _shows_teaching(client)


def test_a_role_kept_for_another_user_or_from_the_future_is_not_trusted(client: Client) -> None:
    """The kept role names its user and time: another user's, or one dated ahead, is asked again."""
    user = UserFactory()
    client.force_login(user)
    session = client.session
    session[ROLE_SESSION_KEY] = [user.pk + 1, True, 0]
    session.save()
    assert not _shows_teaching(client)
    _age_the_kept_role(client, -2 * ROLE_LIFETIME_SECONDS)  # dated in the future
    user_make_instructor(user=user)
    assert _shows_teaching(client)


def test_staff_need_no_group_query(client: Client) -> None:
    """Staff are instructors by their flag: no group query, nothing kept."""
    client.force_login(UserFactory(is_staff=True))
    with CaptureQueriesContext(connection) as ctx:
        assert _shows_teaching(client)
    assert _group_queries(ctx) == 0
    assert ROLE_SESSION_KEY not in client.session
