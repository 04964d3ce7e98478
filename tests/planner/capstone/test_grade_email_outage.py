"""A grade released while Redis is down, through the running site (gunicorn, a Celery worker on
the `email` queue and beat, all on a private Redis the test stops and starts, and a real SMTP
server): the release answers as usual, nothing is lost, and once Redis is back the learner gets
exactly one email."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from planner.capstone.grading import submission_claim
from planner.models import Criterion, Grade
from tests.factories import PASSWORD, InstructorFactory, UserFactory
from tests.ops.outage import Browser, RedisServer, WebServer, service_env
from tests.planner.factories import course_taught_by, submission_for
from tests.reminders.worker import Beat, SMTPRecorder, SMTPServer, Worker, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WEB_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]


def test_grade_released_while_redis_is_down_is_emailed_once_it_is_back(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = WEB_HASHERS
    instructor = InstructorFactory()
    course = course_taught_by(instructor)
    learner = UserFactory(email="lee@example.com")
    submission = submission_for(learner, course)
    submission_claim(grader=instructor, submission_id=submission.pk, now=timezone.now())
    levels = {
        f"level_{criterion.pk}": criterion.levels.order_by("-points").first().pk
        for criterion in Criterion.objects.filter(rubric__course=course)
    }
    with SMTPServer(SMTPRecorder()) as smtp, RedisServer() as redis:
        env = service_env(redis_url=redis.url, email_url=smtp.url)
        web = WebServer(env)
        worker = Worker(env, queues="email,default", name="grades")
        beat = Beat(env)
        try:
            web.wait_ready()
            worker.wait_ready(ping=False)
            browser = Browser(web.url)
            assert browser.log_in(instructor.email, PASSWORD)[0] == 302
            assert browser.request(f"/capstone/grading/{submission.pk}/")[0] == 200

            redis.stop()
            status, body, location = browser.request(
                f"/capstone/grading/{submission.pk}/save/",
                {"action": "release", "overall_feedback": "Clear and measured.", **levels},
            )
            assert (status, location) == (302, "/capstone/grading/"), body[:2000]
            grade = Grade.objects.get(submission=submission)
            assert grade.status == Grade.Status.RELEASED
            time.sleep(2)
            assert smtp.recorder.received == []  # nothing can go while the broker is down

            redis.start()
            wait_for(
                lambda: smtp.recorder.per_recipient()[learner.email] >= 1,
                what=f"the grade email; worker log:\n{worker.output()[-3000:]}",
            )
            time.sleep(5)  # the sweep keeps running: a second copy would have come by now
            # Released once: a second release is refused, and sends nothing either.
            status, _, _ = browser.request(
                f"/capstone/grading/{submission.pk}/save/",
                {"action": "release", "overall_feedback": "Again.", **levels},
            )
            assert status in (400, 409)
            time.sleep(2)
        finally:
            web.stop()
            worker.stop()
            beat.stop()
    assert smtp.recorder.per_recipient() == {learner.email: 1}
    (received,) = smtp.recorder.received
    assert course.title in received.subject
    assert "Internal Server Error" not in web.output()
