"""The capstone's email outbox: a release writes its email's row in its own transaction (rolled
back together), the sender records a temporary refusal with a retry time, a permanent one with
its reason on the status page, a lost answer after the data as possibly delivered, and the sweep
sends what nobody took."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.db import transaction
from django.utils import timezone

from planner.capstone.grade_email import capstone_email_send
from planner.capstone.grading import ScoreInput, grade_release, submission_claim
from planner.capstone.outbox import CapstoneEmail, capstone_emails_sweep
from planner.models import Grade
from tests.planner.factories import course_taught_by, submission_for
from tests.reminders.worker import SMTPRecorder, SMTPServer

pytestmark = pytest.mark.django_db

Status = CapstoneEmail.Status


@pytest.fixture
def course(instructor):  # type: ignore[no-untyped-def]
    return course_taught_by(instructor)


@pytest.fixture
def submission(learner, course):  # type: ignore[no-untyped-def]
    return submission_for(learner, course)


def release(instructor, course, submission) -> Grade:  # type: ignore[no-untyped-def]
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    scores = [
        ScoreInput(criterion_id=c.pk, level_id=c.levels.get(key="strong").pk)
        for c in course.rubric.criteria.all()
    ]
    return grade_release(
        grader=instructor, submission_id=submission.pk, now=now, scores=scores, overall_feedback=""
    )


def smtp_through(settings, port: int, timeout: int = 30) -> None:  # type: ignore[no-untyped-def]
    settings.MAILERS = {
        "default": {
            "BACKEND": "config.mail.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": port, "timeout": timeout},
        }
    }


def test_the_email_row_is_written_and_rolled_back_with_the_release(
    instructor, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RuntimeError), transaction.atomic():
        release(instructor, course, submission)
        assert CapstoneEmail.objects.filter(status=Status.PENDING).count() == 1
        raise RuntimeError("the request failed after the release")
    assert not CapstoneEmail.objects.exists()
    assert not Grade.objects.filter(status=Grade.Status.RELEASED).exists()

    with django_capture_on_commit_callbacks(execute=True):
        grade = release(instructor, course, submission)
    (email,) = CapstoneEmail.objects.all()
    assert (email.kind, email.grade_id, email.status) == ("grade_released", grade.pk, Status.SENT)
    assert email.message_id == mail.outbox[0].extra_headers["Message-ID"]
    assert len(mail.outbox) == 1


def test_refusals_are_retried_or_failed_with_the_servers_reason(
    settings, instructor, course, submission, client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """451: failed for now with a retry time, sent by the retry; 550: failed for good, its reason
    on the status page."""
    with django_capture_on_commit_callbacks(execute=False):
        release(instructor, course, submission)
    email = CapstoneEmail.objects.get()
    recorder = SMTPRecorder(refuse=["451 4.3.0 Try again later"])
    with SMTPServer(recorder) as server:
        smtp_through(settings, server.port)
        now = timezone.now()
        email = capstone_email_send(email_id=email.pk, now=now)
        assert email is not None
        assert (email.status, email.attempts) == (Status.FAILED, 1)
        assert "451" in email.last_error
        assert now < email.next_attempt_at <= now + timedelta(seconds=20)
        recorder.refuse = ["550 5.7.1 Delivery not authorized"]
        email = capstone_email_send(email_id=email.pk, now=timezone.now())
        assert email is not None
        assert (email.status, email.next_attempt_at) == (Status.FAILED, None)
        # Failed for good: neither a send nor the sweep tries it again.
        assert capstone_email_send(email_id=email.pk, now=timezone.now()) is None
        assert capstone_emails_sweep(now=timezone.now() + timedelta(days=1)) == []
    assert recorder.received == []
    client.force_login(instructor)
    page = client.get("/reminders/").content.decode()
    assert 'data-testid="grade-emails-failed">1<' in page
    assert "5.7.1 Delivery not authorized" in page


def test_a_stalled_answer_is_possibly_delivered_and_not_sent_again(
    settings, instructor, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=False):
        release(instructor, course, submission)
    email = CapstoneEmail.objects.get()
    recorder = SMTPRecorder(stall=1, stall_seconds=3)
    with SMTPServer(recorder) as server:
        smtp_through(settings, server.port, timeout=1)
        email = capstone_email_send(email_id=email.pk, now=timezone.now())
        assert email is not None and email.status == Status.AMBIGUOUS
        assert capstone_email_send(email_id=email.pk, now=timezone.now()) is None
        assert capstone_emails_sweep(now=timezone.now() + timedelta(days=1)) == []
    assert len(recorder.received) == 1


def test_the_sweep_sends_an_email_nobody_took(
    instructor, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """The enqueue after commit was lost: the sweep finds the row once its moment has come and
    sends it; a second sweep finds nothing."""
    with django_capture_on_commit_callbacks(execute=False):
        release(instructor, course, submission)
    assert mail.outbox == []
    assert capstone_emails_sweep(now=timezone.now()) == []  # not yet: a send may be on its way
    with django_capture_on_commit_callbacks(execute=True):
        swept = capstone_emails_sweep(now=timezone.now() + timedelta(minutes=1))
    assert len(swept) == 1
    assert len(mail.outbox) == 1
    assert CapstoneEmail.objects.get().status == Status.SENT
    assert capstone_emails_sweep(now=timezone.now() + timedelta(hours=1)) == []


def test_a_resubmission_is_acknowledged_by_one_email_and_a_first_version_is_not(
    learner, instructor, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """Version 2 is answered with "we have received version 2" once; version 1 with nothing."""
    from planner.capstone.services import worksheet_autosave, worksheet_submit

    assert not CapstoneEmail.objects.filter(kind="resubmitted").exists()
    with django_capture_on_commit_callbacks(execute=True):
        release(instructor, course, submission)
    mail.outbox.clear()

    worksheet = submission.worksheet
    worksheet_autosave(worksheet=worksheet, data={"feature": "Live lesson chat, revised"})
    with django_capture_on_commit_callbacks(execute=True):
        second = worksheet_submit(worksheet=worksheet, now=timezone.now())

    (email,) = CapstoneEmail.objects.filter(kind="resubmitted")
    assert (email.submission_id, email.status) == (second.pk, Status.SENT)
    (message,) = mail.outbox
    assert message.to == [learner.email]
    assert f"version {second.version}" in message.body
