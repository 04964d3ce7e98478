"""The nightly training stays bounded: past a budget of reviews the pooled set learns from a
stratified, seeded sample of learners, and a card reviewed for years gives at most a fixed
number of training samples."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from quizzes import fsrs_optimizer as opt
from quizzes.models import FsrsParameters, ReviewLog
from quizzes.selectors import parameters as selectors
from quizzes.services.parameters import parameters_train
from tests.factories import CourseFactory
from tests.quizzes.parameters_data import course_with_reviews

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def course():  # type: ignore[no-untyped-def]
    course = CourseFactory(slug="sampled")
    # Light learners (few items) and heavy ones (many): two review-count strata at least.
    course_with_reviews(course=course, learners=4, items=4, days=90, end=NOW, seed=1)
    course_with_reviews(course=course, learners=4, items=16, days=90, end=NOW, seed=2)
    return course


def test_the_sample_keeps_each_stratum_and_the_budget(course) -> None:  # type: ignore[no-untyped-def]
    counts = selectors.learner_review_counts(course=course)
    total = sum(counts.values())
    assert total == ReviewLog.objects.count()  # the schedules' reps count the logs
    assert selectors.pooled_sample(course=course, budget=total) is None  # all of them

    sample = selectors.pooled_sample(course=course, budget=total // 2, strata=2)
    assert sample is not None and sample == selectors.pooled_sample(
        course=course, budget=total // 2, strata=2
    )  # seeded: the same learners every night
    ranked = sorted(counts, key=lambda learner: (counts[learner], learner))
    light, heavy = set(ranked[:4]), set(ranked[4:])
    assert len(set(sample) & light) == 2 and len(set(sample) & heavy) == 2
    sampled = sum(counts[learner] for learner in sample)
    assert total // 4 <= sampled <= 3 * total // 4


def test_training_past_the_budget_reads_only_the_sample(course, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    total = ReviewLog.objects.count()
    monkeypatch.setattr(selectors, "SAMPLE_REVIEWS", total // 2)
    monkeypatch.setattr(selectors, "SAMPLE_STRATA", 2)
    said: list[str] = []
    trained = parameters_train(course=course, learner_id=None, now=NOW, progress=said.append)
    [line] = [s for s in said if s.startswith("sample:")]
    learners, reviews = int(line.split()[1]), int(line.split()[3])
    assert learners < 8 and reviews < total
    # The growth of the next night is measured on the course, not on the sample.
    assert trained.review_count == total
    assert trained.status in {FsrsParameters.Status.ACTIVE, FsrsParameters.Status.REJECTED}
    assert selectors.scopes_to_train(course=course) == []


def test_a_card_reviewed_for_years_gives_a_bounded_number_of_samples() -> None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    daily = [opt.Review(at=start + timedelta(days=k), rating=3) for k in range(700)]
    samples = opt.samples_from_histories([daily])
    assert len(samples) == opt.MAX_SAMPLES_PER_CARD
    assert samples[-1].at == daily[-1].at and samples[0].at < start + timedelta(days=30)
    assert len(opt.samples_from_histories([daily], max_per_card=None)) == 699
