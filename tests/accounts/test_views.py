"""Accounts: sign-up with verification, login limits, roles, preferences."""

from __future__ import annotations

import re

import pytest
import time_machine
from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from accounts.models import User
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def test_anonymous_user_is_sent_to_login() -> None:
    response = Client().get(reverse("dashboard"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


def test_signup_sends_verification_and_login_waits_for_it(client: Client) -> None:
    response = client.post(
        reverse("account_signup"),
        {"email": "new@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^\s]+/accounts/confirm-email/[^\s]+/", mail.outbox[0].body)
    assert link, mail.outbox[0].body
    # Unverified: login is held at the verification step, the dashboard is not reachable.
    client.logout()
    client.post(reverse("account_login"), {"login": "new@example.com", "password": PASSWORD})
    assert client.get(reverse("dashboard")).status_code == 302
    path = "/" + link.group(0).split("/", 3)[3]
    client.post(path)
    assert client.get(reverse("dashboard")).status_code == 200


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"email": "not-an-email", "password1": PASSWORD, "password2": PASSWORD}, "valid email"),
        (
            {"email": "a@example.com", "password1": PASSWORD, "password2": "different pass 1"},
            "same password",
        ),
        ({"email": "a@example.com", "password1": "123", "password2": "123"}, "too short"),
    ],
)
def test_signup_rejects_bad_input_with_a_clear_message(
    client: Client, data: dict[str, str], message: str
) -> None:
    response = client.post(reverse("account_signup"), data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not User.objects.filter(email=data["email"]).exists()


def test_failed_logins_are_rate_limited(client: Client) -> None:
    UserFactory(email="target@example.com")
    bodies = [
        client.post(
            reverse("account_login"), {"login": "target@example.com", "password": "wrong"}
        ).content.decode()
        for _ in range(6)
    ]
    assert "Too many failed login attempts" not in bodies[0]
    assert "Too many failed login attempts" in bodies[-1]
    # Even the right password is refused while the limit holds.
    response = client.post(
        reverse("account_login"), {"login": "target@example.com", "password": PASSWORD}
    )
    assert "Too many failed login attempts" in response.content.decode()
    assert client.get(reverse("dashboard")).status_code == 302


def test_preferences_reject_bad_input_naming_the_field(client: Client, learner: User) -> None:
    client.force_login(learner)
    response = client.post(
        reverse("preferences"),
        {
            "time_zone": "Mars/Olympus",
            "day_start_hour": "25",
            "reminder_hour": "8",
            "pause_days": "-1",
        },
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert (
        "Time zone:" in body
        and "My day starts at:" in body
        and "Pause reminders for (days):" in body
    )
    learner.refresh_from_db()
    assert learner.time_zone == "UTC"


def test_preferences_save_time_zone_and_pause(client: Client, learner: User) -> None:
    client.force_login(learner)
    response = client.post(
        reverse("preferences"),
        {
            "display_name": "Lee",
            "time_zone": "Asia/Tokyo",
            "day_start_hour": "4",
            "reminder_hour": "7",
            "reminders_enabled": "on",
            "pause_days": "3",
        },
    )
    assert response.status_code == 302
    learner.refresh_from_db()
    assert (learner.time_zone, learner.reminder_hour) == ("Asia/Tokyo", 7)
    assert learner.reminders_paused_until is not None


def test_pages_carry_csp_nonce_on_scripts(client: Client, learner: User) -> None:
    client.force_login(learner)
    response = client.get(reverse("dashboard"))
    csp = response["Content-Security-Policy"]
    nonce = re.search(r"'nonce-([^']+)'", csp)
    assert nonce
    assert f'nonce="{nonce.group(1)}"' in response.content.decode()
    assert "'unsafe-inline'" not in csp


def test_pause_counts_days_as_the_learners_learning_day(client: Client, learner: User) -> None:
    """At 02:00 in Tokyo with a 04:00 day start it is still yesterday's learning day, so a
    one-day pause ends on that day, the same day the reminder scan is on."""
    client.force_login(learner)
    with time_machine.travel("2026-03-10T17:00:00+00:00", tick=False):  # 02:00 on 11 March, Tokyo
        client.post(
            reverse("preferences"),
            {
                "time_zone": "Asia/Tokyo",
                "day_start_hour": "4",
                "reminder_hour": "8",
                "reminders_enabled": "on",
                "pause_days": "1",
            },
        )
    learner.refresh_from_db()
    assert str(learner.reminders_paused_until) == "2026-03-10"


def test_account_emails_speak_as_the_product_not_the_host(client: Client) -> None:
    """Issue #14: the verification email opened with "Hello from 127.0.0.1:8100!"."""
    cache.clear()  # the sign-up rate limit counts this client's earlier sign-ups
    client.post(
        reverse("account_signup"),
        {"email": "greeted@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    body = mail.outbox[0].body
    assert body.startswith("Hello from Recall!")
    assert "testserver" not in body.splitlines()[0]
    assert mail.outbox[0].subject.startswith("[Recall] ")
