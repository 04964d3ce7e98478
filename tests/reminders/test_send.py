"""Sending a digest (eager tasks, Django's test outbox): the email's content and headers, the
claim that makes a second send a no-op, failures with their reason, and the staff views."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from courses.models import Enrollment
from reminders.models import ReminderDigest
from reminders.outbox import digest_mark_failed
from reminders.scan import digests_scan
from reminders.sending import digest_send
from reminders.tasks import send_digests
from tests.factories import ChoiceFactory, EnrollmentFactory, QuizItemFactory, RecallScheduleFactory
from tests.reminders.factories import learner_due

pytestmark = pytest.mark.django_db


def scan_and_send(django_capture_on_commit_callbacks, now=None):  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=True):
        return digests_scan(now=now or timezone.now())


def due_now_learner(**kwargs):  # type: ignore[no-untyped-def]
    # Reminder hour 0 and day start 0 in UTC: the reminder hour has always come.
    kwargs.setdefault("reminder_hour", 0)
    kwargs.setdefault("day_start_hour", 0)
    return learner_due(due=timezone.now() - timedelta(hours=1), **kwargs)


class TestDigestEmail:
    def test_one_email_with_name_count_prompt_and_links(
        self, django_capture_on_commit_callbacks, settings
    ):
        """The email names the learner, counts the items due, asks the earliest-due prompt, and
        links (absolutely, from SITE_URL) to the review session, the prompt page and unsubscribe."""
        settings.SITE_URL = "https://recall.example"
        user = due_now_learner(display_name="Ada Lovelace", items=3)
        first = user.recall_schedules.order_by("due", "id").first()
        first.due = timezone.now() - timedelta(days=2)
        first.save()
        scan_and_send(django_capture_on_commit_callbacks)

        assert len(mail.outbox) == 1
        message = mail.outbox[0]
        assert message.to == [user.email]
        text = message.body
        html = message.alternatives[0].content
        assert message.alternatives[0].mimetype == "text/html"
        for body in (text, html):
            assert "Ada Lovelace" in body
            assert "3 items" in body
            assert first.item.prompt in body
            assert "https://recall.example/review/" in body
            assert "https://recall.example/reminders/prompt/" in body
            assert "https://recall.example/reminders/unsubscribe/" in body
        assert first.item.prompt[:40] in message.subject

    def test_subject_and_text_are_not_html_escaped(self, django_capture_on_commit_callbacks):
        """Quotes, apostrophes and ampersands in a prompt reach the subject and the plain text as
        written; only the HTML part escapes them."""
        user = due_now_learner()
        schedule = user.recall_schedules.get()
        schedule.item.prompt = 'What\'s "HBM" & why <does> it matter?'
        schedule.item.save()
        scan_and_send(django_capture_on_commit_callbacks)
        message = mail.outbox[0]
        assert 'What\'s "HBM" & why <does> it matter?' in message.subject
        assert 'What\'s "HBM" & why <does> it matter?' in message.body
        assert "&#x27;" not in message.subject + message.body
        assert (
            "What&#x27;s &quot;HBM&quot; &amp; why &lt;does&gt;" in message.alternatives[0].content
        )

    def test_rfc8058_headers_and_stored_message_id(self, django_capture_on_commit_callbacks):
        """List-Unsubscribe carries the one-click URL, List-Unsubscribe-Post the one-click
        value, and the Message-ID sent is the one stored on the digest row."""
        user = due_now_learner()
        scan_and_send(django_capture_on_commit_callbacks)
        message = mail.outbox[0].message()
        digest = ReminderDigest.objects.get(learner=user)
        assert digest.status == ReminderDigest.Status.SENT
        assert digest.sent_at is not None
        assert digest.attempts == 1
        assert message["Message-ID"] == digest.message_id
        assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        link = re.fullmatch(r"<(.+)>", message["List-Unsubscribe"]).group(1)
        assert "/reminders/unsubscribe/" in link
        assert link in mail.outbox[0].body
        # Written on one line as-is: an RFC 2047 encoded word would hide the URL from RFC 8058
        # readers.
        raw = mail.outbox[0].message().as_bytes()
        assert f"\nList-Unsubscribe: <{link}>\n".encode() in raw
        assert [h["status"] for h in digest.history] == ["pending", "sending", "sent"]

    def test_multiple_choice_prompt_lists_its_choices(self, django_capture_on_commit_callbacks):
        """A multiple-choice prompt is asked with its choices, so it can be answered in the inbox."""
        user = due_now_learner(items=0)
        item = QuizItemFactory(kind="multiple_choice", prompt="Which memory feeds the SMs?")
        ChoiceFactory(item=item, text="HBM", is_correct=True)
        ChoiceFactory(item=item, text="Floppy disk")
        RecallScheduleFactory(
            learner=user, item=item, due=timezone.now() - timedelta(hours=1), state=2, reps=2
        )
        scan_and_send(django_capture_on_commit_callbacks)
        assert "Floppy disk" in mail.outbox[0].body
        assert "Which memory feeds the SMs?" in mail.outbox[0].alternatives[0].content


class TestClaim:
    def test_a_second_send_of_the_same_digest_sends_nothing(
        self, django_capture_on_commit_callbacks
    ):
        """A redelivered task finds the row sent and does not claim it."""
        user = due_now_learner()
        scan_and_send(django_capture_on_commit_callbacks)
        digest = ReminderDigest.objects.get(learner=user)
        assert send_digests.delay([digest.pk]).get() == {digest.pk: "not claimed"}
        assert digest_send(digest_id=digest.pk, now=timezone.now()) is None
        assert len(mail.outbox) == 1
        digest.refresh_from_db()
        assert digest.attempts == 1

    def test_learner_who_switched_off_between_scan_and_send_is_skipped(
        self, django_capture_on_commit_callbacks
    ):
        """The send rechecks: reminders switched off, or nothing due any more, means no email."""
        off = due_now_learner()
        reviewed = due_now_learner()
        with django_capture_on_commit_callbacks(execute=False):
            digests_scan(now=timezone.now())
        off.reminders_enabled = False
        off.save()
        reviewed.recall_schedules.update(due=timezone.now() + timedelta(days=3))
        for digest in ReminderDigest.objects.all():
            send_digests.delay([digest.pk])
        assert mail.outbox == []
        assert set(ReminderDigest.objects.values_list("status", flat=True)) == {"skipped"}

    def test_failure_is_recorded_with_its_reason_and_a_rerun_sends(
        self, django_capture_on_commit_callbacks
    ):
        """A failed row keeps the reason and its history; it can be claimed again and sent."""
        user = due_now_learner()
        with django_capture_on_commit_callbacks(execute=False):
            digests_scan(now=timezone.now())
        digest = ReminderDigest.objects.get(learner=user)
        digest_mark_failed(digest_id=digest.pk, reason="SMTPDataError: 451", now=timezone.now())
        digest.refresh_from_db()
        assert digest.status == "failed"
        assert digest.last_error == "SMTPDataError: 451"
        send_digests.delay([digest.pk])
        digest.refresh_from_db()
        assert digest.status == "sent"
        assert digest.last_error == ""
        assert [h["status"] for h in digest.history] == ["pending", "failed", "sending", "sent"]
        assert len(mail.outbox) == 1


class TestStatus:
    def test_command_prints_todays_counts(self, django_capture_on_commit_callbacks, capsys):
        """`reminders status` prints sent, failed and pending counts for today."""
        a, b, c = due_now_learner(), due_now_learner(), due_now_learner()
        with django_capture_on_commit_callbacks(execute=False):
            digests_scan(now=timezone.now())
        send_digests.delay([ReminderDigest.objects.get(learner=a).pk])
        digest_mark_failed(
            digest_id=ReminderDigest.objects.get(learner=b).pk, reason="boom", now=timezone.now()
        )
        call_command("reminders", "status")
        out = capsys.readouterr().out
        assert "sent 1, failed 1, pending 1" in out
        assert f"failed: {b.email}" in out
        assert "boom" in out
        assert c.pk

    def test_command_scan_then_retry(self, django_capture_on_commit_callbacks, capsys):
        """`reminders scan` writes and sends the digests; `reminders retry` re-sends a failed one."""
        user = due_now_learner()
        with django_capture_on_commit_callbacks(execute=True):
            call_command("reminders", "scan")
        assert "1 new digests" in capsys.readouterr().out
        digest = ReminderDigest.objects.get(learner=user)
        ReminderDigest.objects.filter(pk=digest.pk).update(status="failed", last_error="x")
        with django_capture_on_commit_callbacks(execute=True):
            call_command("reminders", "retry")
        assert "1 failed" in capsys.readouterr().out
        assert len(mail.outbox) == 2
        digest.refresh_from_db()
        assert digest.status == "sent"

    def test_page_for_staff_and_instructors_only(
        self, client: Client, instructor, learner, django_capture_on_commit_callbacks
    ):
        """An instructor sees counts for learners in the courses they teach, not others; a learner
        gets 403; an anonymous visitor is sent to log in."""
        taught = due_now_learner(email="taught@example.com")
        other = due_now_learner(email="other@example.com")
        enrolment = EnrollmentFactory(user=taught)
        EnrollmentFactory(user=instructor, course=enrolment.course, role=Enrollment.Role.INSTRUCTOR)
        scan_and_send(django_capture_on_commit_callbacks)
        assert client.get("/reminders/").status_code == 302
        client.force_login(learner)
        assert client.get("/reminders/").status_code == 403
        client.force_login(instructor)
        page = client.get("/reminders/")
        assert page.status_code == 200
        html = page.content.decode()
        assert 'data-testid="count-sent">1<' in html
        assert "taught@example.com" in html
        assert "other@example.com" not in html
        assert other.pk
