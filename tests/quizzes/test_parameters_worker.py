"""The nightly parameter job across the queue: real Redis, a real Celery worker process on the
`heavy` queue, and the PostgreSQL database the test commits to. Every wait is bounded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import redis
from django.conf import settings

from config.celery import app
from quizzes import fsrs_optimizer as opt
from quizzes.models import FsrsParameters
from quizzes.selectors.parameters import review_histories
from quizzes.tasks import parameters_nightly
from tests.factories import CourseFactory
from tests.quizzes.parameters_data import course_with_reviews
from tests.reminders.worker import Worker, wait_for, worker_database_url

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

Status = FsrsParameters.Status
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def heavy_worker():  # type: ignore[no-untyped-def]
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.flushdb()
    app.conf.task_always_eager = False
    worker = Worker(
        {"DATABASE_URL": worker_database_url(), "REDIS_URL": settings.REDIS_URL},
        queues="heavy",
        name="parameters",
    )
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()
        client.flushdb()


def sets(course) -> list[tuple[int, str]]:  # type: ignore[no-untyped-def]
    return list(
        FsrsParameters.objects.filter(course=course, learner=None)
        .order_by("version")
        .values_list("version", "status")
    )


def test_the_nightly_job_gives_a_course_an_active_set(heavy_worker) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    course_with_reviews(course=course, learners=5, items=20, days=120, end=NOW)
    idle = CourseFactory()  # no reviews: nothing to train
    parameters_nightly.delay()
    wait_for(lambda: sets(course), what="the worker to train the course's pooled set")
    active = FsrsParameters.objects.get(course=course)
    assert active.status == Status.ACTIVE
    assert active.candidate_log_loss < active.defaults_log_loss
    wait_for(lambda: heavy_worker.succeeded() >= 3, what="both refresh tasks to finish")
    assert not FsrsParameters.objects.filter(course=idle).exists()


def test_a_worse_candidate_from_the_job_is_rejected_and_recorded(heavy_worker) -> None:  # type: ignore[no-untyped-def]
    """The set in force was fitted to every review, the ones the job holds out included, and on
    fewer reviews than the course has now; the job's candidate, fitted to the first 70 %, predicts
    the held-out reviews worse, and stays on record as rejected."""
    course = CourseFactory()
    course_with_reviews(course=course, learners=6, items=20, days=120, end=NOW)
    histories = review_histories(course=course)
    seen_everything = opt.train([s.item for s in opt.samples_from_histories(histories.values())])
    total = sum(len(h) for h in histories.values())
    FsrsParameters.objects.create(
        course=course,
        version=1,
        weights=list(seen_everything),
        library=opt.LIBRARY,
        library_version=opt.library_version(),
        trained_at=NOW - timedelta(days=30),
        cutoff=NOW - timedelta(days=40),
        review_count=total // 2,
        train_long_term_count=0,
        heldout_count=0,
        status=Status.ACTIVE,
    )
    parameters_nightly.delay()
    wait_for(lambda: len(sets(course)) == 2, what="the worker to train a second version")
    assert sets(course) == [(1, Status.ACTIVE), (2, Status.REJECTED)]
    rejected = FsrsParameters.objects.get(course=course, version=2)
    assert rejected.candidate_log_loss > rejected.active_log_loss
    assert "does not beat" in rejected.reason
