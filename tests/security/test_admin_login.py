"""The admin login is behind the site's login and its rate limit (five failures per account)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from accounts.models import User
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    """The limits count in the cache (per address too): each test starts with none spent."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def staff() -> User:
    return UserFactory(email="staff@example.com", is_staff=True, is_superuser=True)


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_six_wrong_passwords_on_the_admin_login_then_the_right_one_does_not_sign_in(
    client: Client, staff: User
) -> None:
    """Issue 12: the admin's own form let a seventh guess in; now it has no form to guess at."""
    admin_login = reverse("admin:login")
    for _ in range(6):
        client.post(admin_login, {"username": staff.email, "password": "wrong guess"})
    response = client.post(admin_login, {"username": staff.email, "password": PASSWORD})

    assert not _signed_in(client)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))
    assert client.get(reverse("admin:index")).status_code == 302


def test_the_site_login_refuses_a_staff_account_after_five_failures(
    client: Client, staff: User
) -> None:
    login = reverse("account_login")
    for _ in range(6):
        client.post(login, {"login": staff.email, "password": "wrong guess"})
    client.post(login, {"login": staff.email, "password": PASSWORD})

    assert not _signed_in(client)
    assert client.get(reverse("admin:index")).status_code == 302


def test_staff_reach_the_admin_through_the_site_login(client: Client, staff: User) -> None:
    response = client.get(reverse("admin:index"), follow=True)
    assert response.redirect_chain[-1][0].startswith(reverse("account_login"))

    signed_in = client.post(
        reverse("account_login") + "?next=/admin/",
        {"login": staff.email, "password": PASSWORD},
    )

    assert signed_in["Location"] == "/admin/"
    assert client.get(reverse("admin:index")).status_code == 200


def test_a_signed_in_learner_gets_no_admin_login_form(client: Client) -> None:
    client.force_login(UserFactory())
    assert client.get(reverse("admin:login")).status_code == 403
