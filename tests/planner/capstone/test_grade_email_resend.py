"""The one duplicate the capstone outbox allows carries the first send's Message-ID, so mail
clients fold it: the sender is SIGKILLed after the SMTP server has the whole grade email and
before it answers, and the sweep's resend (a new worker, beat's sweep) carries the same id.

Real processes throughout: gunicorn for the release, Celery workers on a private Redis the test
starts, beat, and an SMTP server (aiosmtpd) in the test process."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from planner.capstone.grading import submission_claim
from planner.capstone.outbox import SENDING_STALE_AFTER, CapstoneEmail
from planner.models import Criterion
from tests.factories import PASSWORD, InstructorFactory, UserFactory
from tests.ops.outage import Browser, RedisServer, WebServer, service_env
from tests.planner.factories import course_taught_by, submission_for
from tests.reminders.worker import Beat, SMTPRecorder, SMTPServer, Worker, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

Status = CapstoneEmail.Status


def test_a_grade_email_resent_after_its_sender_died_keeps_its_message_id(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    instructor = InstructorFactory()
    course = course_taught_by(instructor)
    learner = UserFactory(email="lee@example.com")
    submission = submission_for(learner, course)
    submission_claim(grader=instructor, submission_id=submission.pk, now=timezone.now())
    levels = {
        f"level_{criterion.pk}": criterion.levels.order_by("-points").first().pk
        for criterion in Criterion.objects.filter(rubric__course=course)
    }
    # Every message is held once the server has it whole, before its 250.
    recorder = SMTPRecorder(hold="after_accept", pass_first=0)
    with SMTPServer(recorder) as smtp, RedisServer() as redis:
        # The sender's socket waits at the gate until the kill: its timeout outlasts that.
        env = service_env(redis_url=redis.url, email_url=smtp.url, EMAIL_TIMEOUT="120")
        web = WebServer(env)
        first = Worker(env, queues="email", name="first")
        second = beat = None
        try:
            web.wait_ready()
            first.wait_ready(ping=False)
            browser = Browser(web.url)
            assert browser.log_in(instructor.email, PASSWORD)[0] == 302
            status, body, _ = browser.request(
                f"/capstone/grading/{submission.pk}/save/",
                {"action": "release", "overall_feedback": "Clear and measured.", **levels},
            )
            assert status == 302, body[:2000]

            def held() -> bool:
                email = CapstoneEmail.objects.get()
                return recorder.held == 1 and email.status == Status.SENDING

            wait_for(held, what=f"the grade email at the server; worker:\n{first.output()[-2000:]}")
            claimed = CapstoneEmail.objects.get()
            assert claimed.message_id  # fixed at the claim, before the server had the message
            first.kill()
            recorder.release()
            assert len(recorder.received) == 1

            # As if SENDING_STALE_AFTER had passed since the sender died: beat's next sweep
            # takes the row back and a new worker sends it again.
            CapstoneEmail.objects.update(
                updated_at=timezone.now() - SENDING_STALE_AFTER - timedelta(minutes=1)
            )
            beat = Beat(env)
            second = Worker(env, queues="email,default", name="second")
            second.wait_ready(ping=False)
            wait_for(
                lambda: CapstoneEmail.objects.get().status == Status.SENT,
                what=f"the resend; worker:\n{second.output()[-2000:]}",
            )
        finally:
            web.stop()
            first.stop()
            for process in (second, beat):
                if process is not None:
                    process.stop()
    first_copy, resent = recorder.received
    assert resent.to == first_copy.to == [learner.email]
    assert resent.message_id == first_copy.message_id == claimed.message_id
    email = CapstoneEmail.objects.get()
    assert (email.message_id, email.attempts) == (claimed.message_id, 2)
