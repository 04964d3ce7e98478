"""The peer step as learners meet it: calibration until within a level, assignment of the plans
with the fewest assessors (never one's own, never twice), grading once N are in, flags for
staff, the deadline fallback and the two emails, each sent once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from planner.capstone.grade_email import capstone_email_send
from planner.capstone.outbox import CapstoneEmail
from planner.capstone.peer_assignment import (
    peer_assessment_submit,
    peer_assign,
    self_assessment_submit,
)
from planner.capstone.peer_calibration import (
    calibration_example_next,
    calibration_state,
    calibration_submit,
)
from planner.capstone.peer_grading import (
    peer_courses_run,
    peer_deadline_sweep,
    peer_plans_grade,
)
from planner.capstone.peer_models import PeerAssessment, PeerPlan
from planner.capstone.peer_reminders import (
    peer_waiting_emails,
)
from planner.capstone.peer_services import (
    PeerStepRefused,
)
from tests.planner.capstone.peer_helpers import (
    calibration_example,
    choices,
    learners_with_plans,
    peer_course,
    plan_of,
)

pytestmark = pytest.mark.django_db


def test_a_submitted_plan_is_open_to_peers():
    course = peer_course()
    [learner] = learners_with_plans(course, 1)
    assert plan_of(learner, course).state == PeerPlan.State.OPEN


def test_calibration_shows_the_staff_level_and_passes_within_one_level():
    course = peer_course(attempts=2)
    example = calibration_example(course, "partial")
    [learner] = learners_with_plans(course, 1)
    now = timezone.now()
    feedback = calibration_submit(
        learner=learner,
        course=course,
        example_id=example.pk,
        attempt=1,
        choices=choices(course, "strong"),
        now=now,
    )
    assert all(f.within_one and f.staff.key == "partial" and f.why for f in feedback)
    assert calibration_state(learner=learner, course=course).passed
    assert calibration_example_next(learner=learner, course=course) is None


def test_calibration_ends_failed_when_the_attempts_run_out():
    course = peer_course(attempts=2)
    example = calibration_example(course, "strong")
    [learner] = learners_with_plans(course, 1)
    for attempt in (1, 2):
        feedback = calibration_submit(
            learner=learner,
            course=course,
            example_id=example.pk,
            attempt=attempt,
            choices=choices(course, "missing"),
            now=timezone.now(),
        )
        assert not any(f.within_one for f in feedback)
    state = calibration_state(learner=learner, course=course)
    assert state.failed and state.attempts == 2
    with pytest.raises(PeerStepRefused):
        calibration_submit(
            learner=learner,
            course=course,
            example_id=example.pk,
            attempt=3,
            choices=choices(course, "missing"),
            now=timezone.now(),
        )


def test_assignment_takes_the_fewest_assessed_never_own_never_twice():
    course = peer_course(assessors_per_plan=2)
    learners = learners_with_plans(course, 4)
    now = timezone.now()
    first = peer_assign(assessor=learners[0], course=course, now=now)
    assert first is not None and first.plan.learner != learners[0]
    # Unfinished: the same plan again, not a second one.
    assert peer_assign(assessor=learners[0], course=course, now=now) == first
    peer_assessment_submit(
        assessor=learners[0], assessment_id=first.pk, choices=choices(course), comment="", now=now
    )
    second = peer_assign(assessor=learners[0], course=course, now=now)
    assert second is not None
    assert second.plan_id != first.plan_id and second.plan.learner != learners[0]
    # Another learner gets a plan nobody has assessed yet.
    other = peer_assign(assessor=learners[1], course=course, now=now)
    assert other is not None
    assert other.plan_id not in {first.plan_id, second.plan_id}
    assert other.plan.assigned == 0


def test_assignment_stops_at_n_assessments():
    course = peer_course(assessors_per_plan=2)
    learners = learners_with_plans(course, 4)
    now = timezone.now()
    for _i in range(2):
        a = peer_assign(assessor=learners[0], course=course, now=now)
        assert a is not None
        peer_assessment_submit(
            assessor=learners[0], assessment_id=a.pk, choices=choices(course), comment="", now=now
        )
    assert peer_assign(assessor=learners[0], course=course, now=now) is None


def test_assignment_costs_the_same_queries_however_many_plans():
    course = peer_course()
    small = learners_with_plans(course, 3)
    with CaptureQueriesContext(connection) as few:
        peer_assign(assessor=small[0], course=course, now=timezone.now())
    more = learners_with_plans(course, 12)
    with CaptureQueriesContext(connection) as many:
        peer_assign(assessor=more[0], course=course, now=timezone.now())
    assert _statements(many) == _statements(few) == 5


def _statements(captured: CaptureQueriesContext) -> int:
    """Queries, not the savepoints the test's own transaction turns atomic blocks into."""
    return sum("SAVEPOINT" not in q["sql"] for q in captured.captured_queries)


def _assess_all(course, learners, level_for):  # type: ignore[no-untyped-def]
    now = timezone.now()
    for _round in range(3):
        for learner in learners:
            a = peer_assign(assessor=learner, course=course, now=now)
            if a is not None:
                peer_assessment_submit(
                    assessor=learner,
                    assessment_id=a.pk,
                    choices=choices(course, level_for(learner, a), comment="Clear memory maths."),
                    comment="Good plan.",
                    now=now,
                )


def test_agreeing_peers_grade_the_plan_and_the_learner_is_emailed_once(
    django_capture_on_commit_callbacks,
):
    course = peer_course()
    learners = learners_with_plans(course, 4)
    _assess_all(course, learners, lambda learner, a: "partial")
    with django_capture_on_commit_callbacks(execute=True):
        decided = peer_plans_grade(course=course, now=timezone.now())
        peer_plans_grade(course=course, now=timezone.now())
    assert len(decided) == 4
    plan = plan_of(learners[0], course)
    assert plan.state == PeerPlan.State.GRADED
    levels = {c["level"] for c in plan.result["criteria"].values()}
    assert levels == {1}
    emails = CapstoneEmail.objects.filter(kind=CapstoneEmail.Kind.PEER_GRADED)
    assert emails.count() == 4
    graded_mail = [m for m in mail.outbox if "graded by your peers" in m.subject]
    assert len(graded_mail) == 4
    plan = plan_of(learners[0], course)
    mine = next(m for m in graded_mail if m.to == [learners[0].email])
    assert f"/capstone/submissions/{plan.submission_id}/peer/" in mine.body
    # A second send of a sent row sends nothing.
    assert capstone_email_send(email_id=emails.first().pk, now=timezone.now()) is None
    assert len(mail.outbox) == 4


def test_peers_disagreeing_by_more_than_a_level_flag_the_plan_for_staff():
    course = peer_course()
    learners = learners_with_plans(course, 4)
    target = plan_of(learners[0], course)
    split = {}

    def level_for(learner, assessment):  # type: ignore[no-untyped-def]
        if assessment.plan_id != target.pk:
            return "partial"
        split[learner.pk] = "missing" if not split else "strong"
        return split[learner.pk]

    _assess_all(course, learners, level_for)
    peer_plans_grade(course=course, now=timezone.now())
    target.refresh_from_db()
    assert target.state == PeerPlan.State.FLAGGED
    assert any("disagree" in flag for flag in target.result["flags"])


def test_a_check_error_every_peer_passed_flags_the_plan():
    course = peer_course()
    learners = learners_with_plans(course, 4)
    plan = plan_of(learners[0], course)
    PeerPlan.objects.filter(pk=plan.pk)  # the submission is immutable: write its check directly
    type(plan.submission).objects.filter(pk=plan.submission_id).update(
        check_result={"findings": [{"severity": "error", "message": "The KV cache overflows."}]}
    )
    _assess_all(course, learners, lambda learner, a: "strong")
    peer_plans_grade(course=course, now=timezone.now())
    plan.refresh_from_db()
    assert plan.state == PeerPlan.State.FLAGGED
    assert "KV cache overflows" in plan.result["flags"][0]


def test_plans_short_of_assessors_at_the_deadline_go_to_staff():
    now = timezone.now()
    course = peer_course(deadline=now + timedelta(days=1))
    learners = learners_with_plans(course, 3)
    assert peer_deadline_sweep(course=course, now=now) == 0
    assert peer_deadline_sweep(course=course, now=now + timedelta(days=2)) == 3
    plan = plan_of(learners[0], course)
    assert plan.state == PeerPlan.State.FLAGGED
    assert plan.result["flags"] == ["Only 0 of 3 peer assessments by the deadline."]
    # Flagged plans are closed to peers.
    assert peer_assign(assessor=learners[1], course=course, now=now) is None


def test_the_waiting_email_goes_at_most_once_a_day(django_capture_on_commit_callbacks):
    course = peer_course()
    learners = learners_with_plans(course, 3)
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        assert peer_waiting_emails(course=course, now=now) == 3
        assert peer_waiting_emails(course=course, now=now + timedelta(hours=23)) == 0
    assert len([m for m in mail.outbox if "waiting for your assessment" in m.subject]) == 3
    assert peer_waiting_emails(course=course, now=now + timedelta(hours=25)) == 3
    # A learner with an assignment open is not reminded.
    peer_assign(assessor=learners[0], course=course, now=now)
    assert peer_waiting_emails(course=course, now=now + timedelta(hours=50)) == 2


def test_the_beat_run_grades_flags_and_reminds():
    course = peer_course()
    learners = learners_with_plans(course, 4)
    _assess_all(course, learners, lambda learner, a: "partial")
    assert peer_courses_run(now=timezone.now()) == 4


def test_self_assessment_once_and_only_of_ones_own_plan():
    course = peer_course()
    learners = learners_with_plans(course, 2)
    plan = plan_of(learners[0], course)
    now = timezone.now()
    self_assessment_submit(
        learner=learners[0], plan=plan, choices=choices(course), comment="Mine.", now=now
    )
    with pytest.raises(PeerStepRefused):
        self_assessment_submit(
            learner=learners[0], plan=plan, choices=choices(course), comment="", now=now
        )
    with pytest.raises(PeerAssessment.DoesNotExist):
        self_assessment_submit(
            learner=learners[1], plan=plan, choices=choices(course), comment="", now=now
        )


def test_a_plan_taken_and_left_is_given_back_after_the_lease():
    from planner.capstone.peer_assignment import ASSIGNMENT_LEASE, peer_assignments_expire

    course = peer_course(assessors_per_plan=2)
    learners = learners_with_plans(course, 4)
    now = timezone.now()
    target = plan_of(learners[3], course)
    taken = []
    for learner in learners[:3]:
        # Each of the first three takes the target while it has room.
        PeerPlan.objects.exclude(pk=target.pk).update(assigned=5)
        a = peer_assign(assessor=learner, course=course, now=now)
        taken.append(a)
    assert [a.plan_id for a in taken[:2]] == [target.pk, target.pk] and taken[2] is None
    # The first assessor walks away; the second finishes.
    peer_assessment_submit(
        assessor=learners[1],
        assessment_id=taken[1].pk,
        choices=choices(course),
        comment="",
        now=now,
    )
    assert peer_assignments_expire(course=course, now=now + ASSIGNMENT_LEASE / 2) == 0
    assert peer_assignments_expire(course=course, now=now + ASSIGNMENT_LEASE * 2) == 1
    target.refresh_from_db()
    assert target.assigned == 1
    # The freed slot goes to the next assessor; the plan still has at most two.
    again = peer_assign(assessor=learners[2], course=course, now=now)
    assert again is not None and again.plan_id == target.pk and again.slot == 1
    assert PeerAssessment.objects.filter(plan=target, kind="peer").count() == 2
    # The one who walked away finds their assessment gone.
    assert not PeerAssessment.objects.filter(pk=taken[0].pk).exists()
