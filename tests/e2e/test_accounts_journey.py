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
    page.get_by_role("button", name="Sign up", exact=True).click()
    page.get_by_role("heading", name="Confirm your email address").wait_for()

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
    page.get_by_role("button", name="Log in", exact=True).click()
    page.wait_for_url("**/dashboard/")
    assert page.get_by_text("You are not enrolled in a course yet").is_visible()
    assert not page.console_errors, page.console_errors


HELP_UNDER_INPUT = """(id) => {
  const input = document.getElementById(id);
  const help = document.getElementById(id + "_helptext");
  return help.getBoundingClientRect().top >= input.getBoundingClientRect().bottom - 1;
}"""


@pytest.mark.parametrize("width", [1280, 375])
def test_account_pages_say_log_in_and_emails_come_from_recall(page, width: int) -> None:  # type: ignore[no-untyped-def]
    """One wording ('Log in', 'Sign up', 'Log out'), help text under its input, and the
    verification email greeting from the product, not from the request's host."""
    page.set_viewport_size({"width": width, "height": 800})
    page.goto("/accounts/login/")
    assert page.get_by_role("heading", name="Log in", exact=True).is_visible()
    assert page.title().startswith("Log in")
    assert page.evaluate(HELP_UNDER_INPUT, "id_password")
    assert page.get_by_role("link", name="Forgot your password?").is_visible()

    page.get_by_role("main").get_by_role("link", name="sign up").click()
    assert page.get_by_role("heading", name="Sign up", exact=True).is_visible()
    assert page.evaluate(HELP_UNDER_INPUT, "id_password1")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for wrong in ("Sign In", "Sign Up", "Signup", "sign in"):
        assert wrong not in page.content()
    page.get_by_label("Email").fill(f"words-{width}@example.com")
    page.locator("#id_password1").fill("a long enough passphrase")
    page.locator("#id_password2").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign up", exact=True).click()
    page.get_by_role("heading", name="Confirm your email address").wait_for()
    assert "signup" not in page.get_by_role("main").inner_text().lower()

    (message,) = mail.outbox
    assert message.subject.startswith("[Recall] ")
    assert message.body.startswith("Hello from Recall!")
    assert "127.0.0.1" not in message.body.split("http://")[0]
    assert "localhost" not in message.body.split("http://")[0]
