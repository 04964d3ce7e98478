"""Learners asking for a plan at the same moment (PostgreSQL, threads): the last slot of a plan
goes to one of them, never beyond N, and nobody is handed the same plan twice."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.utils import timezone

from planner.capstone.peer_assignment import (
    peer_assign,
)
from planner.capstone.peer_models import PeerAssessment, PeerPlan
from tests.planner.capstone.peer_helpers import learners_with_plans, peer_course

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _at_once(learners, course) -> dict[int, int | None]:  # type: ignore[no-untyped-def]
    barrier = threading.Barrier(len(learners))
    got: dict[int, int | None] = {}

    def ask(index: int) -> None:
        try:
            barrier.wait(timeout=10)
            assessment = peer_assign(assessor=learners[index], course=course, now=timezone.now())
            got[index] = assessment.plan_id if assessment else None
        finally:
            connection.close()

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(learners))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return got


@pytest.mark.parametrize("round_", range(3))
def test_two_learners_asking_at_once_never_share_the_last_slot(round_: int) -> None:
    course = peer_course(assessors_per_plan=1)
    # Three plans: the two askers' own and one more, so the third plan has one slot left.
    learners = learners_with_plans(course, 3)
    got = _at_once(learners[:2], course)
    assert len(got) == 2
    taken = [plan for plan in got.values() if plan is not None]
    assert len(taken) == len(set(taken)), got
    for plan in PeerPlan.objects.filter(course=course):
        assert PeerAssessment.objects.filter(plan=plan, kind="peer").count() <= 1
        assert plan.assigned <= 1


def test_many_learners_at_once_fill_every_plan_to_n_and_no_further() -> None:
    course = peer_course(assessors_per_plan=2)
    learners = learners_with_plans(course, 6)
    for _round in range(3):
        _at_once(learners, course)
        # Each learner completes nothing: their open one is returned again, so finish them.
        PeerAssessment.objects.filter(course=course, completed_at__isnull=True).update(
            completed_at=timezone.now()
        )
    for plan in PeerPlan.objects.filter(course=course):
        slots = list(
            PeerAssessment.objects.filter(plan=plan, kind="peer").values_list("slot", flat=True)
        )
        assert len(slots) == len(set(slots)) <= 2
        assert plan.assigned == len(slots)
        assert plan.learner_id not in set(
            PeerAssessment.objects.filter(plan=plan).values_list("assessor_id", flat=True)
        )


def test_two_tabs_submitting_one_calibration_attempt_record_it_once() -> None:
    from planner.capstone.peer_calibration import (
        calibration_submit,
    )
    from planner.capstone.peer_services import (
        PeerStepRefused,
    )
    from tests.planner.capstone.peer_helpers import calibration_example, choices

    course = peer_course(attempts=3)
    example = calibration_example(course, "strong")
    [learner] = learners_with_plans(course, 1)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def submit() -> None:
        try:
            barrier.wait(timeout=10)
            calibration_submit(
                learner=learner,
                course=course,
                example_id=example.pk,
                attempt=1,
                choices=choices(course, "missing"),
                now=timezone.now(),
            )
            outcomes.append("recorded")
        except PeerStepRefused:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["recorded", "refused"]
    assert PeerAssessment.objects.filter(assessor=learner, kind="calibration").count() == 1
