"""The digest's signed links: RFC 8058 one-click unsubscribe and the recall prompt page.

Mail scanners follow links, so a GET never changes anything; a POST does. Tampered or expired
tokens are refused without touching state.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.core import signing
from django.test import Client
from django.utils import timezone

from quizzes.models import RecallSchedule, ReviewLog
from quizzes.services import fsrs_adapter
from reminders.links import UNSUBSCRIBE_SALT, prompt_token_make, unsubscribe_token_make
from reminders.models import ReminderDigest
from tests.factories import ChoiceFactory, QuizItemFactory, RecallScheduleFactory
from tests.reminders.factories import learner_due

pytestmark = pytest.mark.django_db


@pytest.fixture
def csrf_client() -> Client:
    """A client that enforces CSRF like a browser or a mail provider would meet it."""
    return Client(enforce_csrf_checks=True)


class TestUnsubscribe:
    def test_get_shows_a_confirm_button_and_changes_nothing(self, csrf_client: Client):
        """GET (what a link scanner does) renders the confirmation; reminders stay on."""
        user = learner_due(due=timezone.now())
        response = csrf_client.get(
            f"/reminders/unsubscribe/{unsubscribe_token_make(learner=user)}/"
        )
        assert response.status_code == 200
        assert b'<button type="submit">Unsubscribe</button>' in response.content
        user.refresh_from_db()
        assert user.reminders_enabled is True

    def test_one_click_post_unsubscribes_without_login_or_csrf(self, csrf_client: Client):
        """The RFC 8058 POST (body List-Unsubscribe=One-Click, no cookie) switches reminders off
        and closes today's unsent digest."""
        user = learner_due(due=timezone.now())
        digest = ReminderDigest.objects.create(learner=user, local_date=timezone.now().date())
        response = csrf_client.post(
            f"/reminders/unsubscribe/{unsubscribe_token_make(learner=user)}/",
            data="List-Unsubscribe=One-Click",
            content_type="application/x-www-form-urlencoded",
        )
        assert response.status_code == 200
        assert b"You are unsubscribed" in response.content
        user.refresh_from_db()
        assert user.reminders_enabled is False
        digest.refresh_from_db()
        assert digest.status == ReminderDigest.Status.SKIPPED

    def test_tampered_token_is_refused(self, csrf_client: Client):
        """A token with a changed payload or signature is a 400 and unsubscribes nobody."""
        user = learner_due(due=timezone.now())
        other = learner_due(due=timezone.now())
        token = unsubscribe_token_make(learner=user)
        forged = signing.dumps({"u": other.pk}, salt=UNSUBSCRIBE_SALT, key="not-our-secret-key")
        other_salt = signing.dumps({"u": other.pk}, salt="some.other.purpose")
        flipped = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
        for bad in (flipped, forged, other_salt, "nonsense"):
            assert csrf_client.post(f"/reminders/unsubscribe/{bad}/").status_code == 400
        user.refresh_from_db()
        other.refresh_from_db()
        assert user.reminders_enabled and other.reminders_enabled

    def test_expired_token_is_refused(self, csrf_client: Client):
        """After 90 days the unsubscribe token no longer works (the page points to preferences)."""
        user = learner_due(due=timezone.now())
        token = unsubscribe_token_make(learner=user)
        with time_machine.travel(timezone.now() + timedelta(days=91)):
            response = csrf_client.post(f"/reminders/unsubscribe/{token}/")
        assert response.status_code == 400
        assert b"/accounts/preferences/" in response.content
        user.refresh_from_db()
        assert user.reminders_enabled is True


def prompt_setup(kind: str = "free_recall"):  # type: ignore[no-untyped-def]
    user = learner_due(due=timezone.now(), items=0)
    item = QuizItemFactory(kind=kind, prompt="Why does HBM matter?", model_answer="Bandwidth.")
    if kind == "multiple_choice":
        ChoiceFactory(item=item, text="Bandwidth", is_correct=True, reason="Feeds the cores.")
        ChoiceFactory(item=item, text="Colour", reason="No.")
    schedule = RecallScheduleFactory(
        learner=user, item=item, due=timezone.now() - timedelta(hours=2)
    )
    digest = ReminderDigest.objects.create(
        learner=user, local_date=timezone.now().date(), status="sent"
    )
    return user, schedule, prompt_token_make(digest_id=digest.pk, schedule_id=schedule.pk)


class TestPromptPage:
    def test_get_shows_prompt_and_answer_and_changes_nothing(self, client: Client):
        """GET shows the prompt, the answer behind a disclosure and four POST grade buttons;
        nothing is graded."""
        _, schedule, token = prompt_setup("multiple_choice")
        response = client.get(f"/reminders/prompt/{token}/")
        html = response.content.decode()
        assert response.status_code == 200
        assert "Why does HBM matter?" in html
        assert "<summary>Show the answer</summary>" in html
        assert "Feeds the cores." in html
        assert html.count('name="rating"') == 4
        assert 'method="post"' in html
        assert str(schedule.card_token) in html
        assert ReviewLog.objects.count() == 0
        before = schedule.due
        schedule.refresh_from_db()
        assert schedule.due == before

    @pytest.mark.parametrize("rating", [1, 3, 4])
    def test_each_grade_button_shows_the_interval_that_grade_gives(
        self, csrf_client: Client, rating: int
    ):
        """The grade buttons preview the next interval, as the review session does: after a POST
        with one of them, the schedule is due again after exactly the interval its button showed."""
        _, schedule, token = prompt_setup()
        url = f"/reminders/prompt/{token}/"
        with time_machine.travel(timezone.now(), tick=False):
            page = csrf_client.get(url)
            html = page.content.decode()
            button = re.search(
                rf'<button[^>]*value="{rating}"[^>]*>.*?class="grade-interval">([^<]+)<',
                html,
                re.DOTALL,
            )
            assert button is not None
            shown = button.group(1).strip()
            data = {
                "rating": str(rating),
                "card_token": str(schedule.card_token),
                "csrfmiddlewaretoken": page.cookies["csrftoken"].value,
            }
            assert csrf_client.post(url, data).status_code == 200
            schedule.refresh_from_db()
            assert fsrs_adapter.interval_label(schedule.due - timezone.now()) == shown

    def test_post_grades_once_through_review_grade(self, csrf_client: Client):
        """A POST grades the schedule (source: email) and moves it; the same POST again (a double
        click) grades nothing more."""
        _, schedule, token = prompt_setup()
        url = f"/reminders/prompt/{token}/"
        page = csrf_client.get(url)
        csrf = page.cookies["csrftoken"].value
        data = {"rating": "3", "card_token": str(schedule.card_token), "csrfmiddlewaretoken": csrf}
        response = csrf_client.post(url, data)
        assert response.status_code == 200
        assert "Graded “Good”" in response.content.decode()
        log = ReviewLog.objects.get()
        assert log.source == ReviewLog.Source.EMAIL
        assert log.rating == 3
        schedule.refresh_from_db()
        assert schedule.due > timezone.now()
        csrf_client.post(url, data)
        assert ReviewLog.objects.count() == 1

    def test_the_grade_records_how_long_the_learner_took(self, csrf_client: Client):
        """The page carries when it showed the prompt; the grade's review log records the time
        from then to the grade, as the review session and the lesson items do."""
        _, schedule, token = prompt_setup()
        url = f"/reminders/prompt/{token}/"
        shown = timezone.now()
        with time_machine.travel(shown, tick=False):
            page = csrf_client.get(url)
        shown_at = re.search(r'name="shown_at" value="(\d+)"', page.content.decode())
        assert shown_at is not None
        data = {
            "rating": "3",
            "card_token": str(schedule.card_token),
            "shown_at": shown_at.group(1),
            "csrfmiddlewaretoken": page.cookies["csrftoken"].value,
        }
        with time_machine.travel(shown + timedelta(seconds=7.5), tick=False):
            assert csrf_client.post(url, data).status_code == 200
        assert ReviewLog.objects.get().duration_ms == 7500

    def test_post_needs_csrf(self, csrf_client: Client):
        """The grade form is a normal form: a cross-site POST without the CSRF token is refused."""
        _, schedule, token = prompt_setup()
        response = csrf_client.post(
            f"/reminders/prompt/{token}/",
            {"rating": "3", "card_token": str(schedule.card_token)},
        )
        assert response.status_code == 403
        assert ReviewLog.objects.count() == 0

    def test_stale_card_changes_nothing(self, client: Client):
        """A card token that is no longer current (graded elsewhere since) grades nothing."""
        _, schedule, token = prompt_setup()
        old = schedule.card_token
        RecallSchedule.objects.filter(pk=schedule.pk).update(
            card_token="00000000-0000-0000-0000-000000000001"
        )
        response = client.post(
            f"/reminders/prompt/{token}/", {"rating": "4", "card_token": str(old)}
        )
        assert "already graded" in response.content.decode()
        assert ReviewLog.objects.count() == 0

    def test_tampered_and_expired_tokens_are_refused(self, client: Client):
        """A changed token is a 400; after three days the link has expired. Neither grades."""
        _, schedule, token = prompt_setup()
        data = {"rating": "3", "card_token": str(schedule.card_token)}
        assert client.get(f"/reminders/prompt/{token}x/").status_code == 400
        assert client.post(f"/reminders/prompt/{token[:-1]}/", data).status_code == 400
        with time_machine.travel(timezone.now() + timedelta(days=4)):
            assert client.get(f"/reminders/prompt/{token}/").status_code == 400
            assert client.post(f"/reminders/prompt/{token}/", data).status_code == 400
        assert ReviewLog.objects.count() == 0

    def test_a_token_cannot_reach_another_learners_schedule(self, client: Client):
        """The schedule must belong to the digest's learner, even in a validly signed token."""
        user, _, _ = prompt_setup()
        _, their_schedule, _ = prompt_setup()
        digest = ReminderDigest.objects.get(learner=user)
        token = prompt_token_make(digest_id=digest.pk, schedule_id=their_schedule.pk)
        assert client.get(f"/reminders/prompt/{token}/").status_code == 400
