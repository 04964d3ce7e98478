"""Two graders claim the same submission at the same moment: exactly one wins (PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.utils import timezone

from planner.capstone.grading import ClaimHeld, submission_claim
from planner.models import GradingClaim
from tests.factories import InstructorFactory
from tests.planner.factories import course_taught_by, submission_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("round_", range(3))
def test_two_simultaneous_claims_exactly_one_wins(learner, round_: int) -> None:  # type: ignore[no-untyped-def]
    graders = [InstructorFactory(), InstructorFactory()]
    course = course_taught_by(graders[0])
    submission = submission_for(learner, course)
    barrier = threading.Barrier(2)
    results: dict[int, str] = {}

    def claim(index: int) -> None:
        try:
            barrier.wait(timeout=10)
            submission_claim(grader=graders[index], submission_id=submission.pk, now=timezone.now())
            results[index] = "won"
        except ClaimHeld as exc:
            results[index] = f"refused: {exc}"
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(v.split(":")[0] for v in results.values()) == ["refused", "won"], results
    winner = next(i for i, v in results.items() if v == "won")
    loser = 1 - winner
    claim_row = GradingClaim.objects.get(submission=submission)
    assert claim_row.grader == graders[winner]
    assert graders[winner].name in results[loser]
