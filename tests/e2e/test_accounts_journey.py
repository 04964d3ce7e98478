"""First journey in a real browser: sign up, verify from the outbox, log in, see the dashboard."""

from __future__ import annotations

import re

import pytest
from django.core import mail

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_signup_verify_login_dashboard(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.goto("/")
    page.get_by_role("link", name="Sign up").first.click()
    page.get_by_label("Email").fill("journey@example.com")
    page.locator("#id_password1").fill("a long enough passphrase")
    page.locator("#id_password2").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign Up").click()
    page.get_by_text("Verify Your Email Address").first.wait_for()

    assert len(mail.outbox) == 1
    link = re.search(r"http://[^\s]+/accounts/confirm-email/[^\s]+/", mail.outbox[0].body)
    assert link
    page.goto(link.group(0))
    page.get_by_role("button", name="Confirm").click()

    page.wait_for_url("**/dashboard/")
    assert page.get_by_role("heading", name=re.compile("Hello")).is_visible()
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(lambda url: "/dashboard/" not in url)
    page.goto("/accounts/login/")
    page.get_by_label("Email").fill("journey@example.com")
    page.get_by_label("Password").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign In").click()
    page.wait_for_url("**/dashboard/")
    assert page.get_by_text("You are not enrolled in a course yet").is_visible()
    assert not page.console_errors, page.console_errors
