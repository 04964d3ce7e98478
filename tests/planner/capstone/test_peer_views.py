"""The peer pages over HTTP: a learner calibrates (htmx answers the section in place), takes
and assesses a peer's plan, sees their peer grade; bad input is a 400 naming the field; an
instructor sets the course's peer step and sees the flagged plan in the queue."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from planner.capstone.peer_assignment import (
    peer_assessment_submit,
    peer_assign,
)
from planner.capstone.peer_grading import (
    peer_deadline_sweep,
    peer_plans_grade,
)
from planner.capstone.peer_models import PeerAssessment, PeerPlan
from planner.models import Criterion
from tests.factories import InstructorFactory
from tests.planner.capstone.peer_helpers import (
    calibration_example,
    choices,
    learners_with_plans,
    peer_course,
    plan_of,
)

pytestmark = pytest.mark.django_db


def level_post(course, key: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {
        f"level_{c.pk}": str(c.levels.get(key=key).pk)
        for c in Criterion.objects.filter(rubric__course=course)
    }


def test_calibration_then_assessing_a_peer(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course(attempts=2)
    example = calibration_example(course, "partial")
    learners = learners_with_plans(course, 3)
    client.force_login(learners[0])
    page = client.get(reverse("capstone:peer", kwargs={"course_slug": course.slug}))
    assert example.title in page.content.decode()
    answer = client.post(
        reverse("capstone:peer_calibrate", kwargs={"course_slug": course.slug}),
        {"example": example.pk, "attempt": "1", **level_post(course, "strong")},
        headers={"HX-Request": "true"},
    )
    body = answer.content.decode()
    assert answer.status_code == 200 and "<html" not in body
    assert "Calibrated" in body and "The staff&#x27;s reason for memory." in body
    taken = client.post(reverse("capstone:peer_assign", kwargs={"course_slug": course.slug}))
    assessment = PeerAssessment.objects.get(assessor=learners[0], kind="peer")
    assert taken["Location"] == reverse("capstone:peer_assessment", args=[assessment.pk])
    form = client.get(taken["Location"]).content.decode()
    assert "Automatic check" in form
    saved = client.post(
        reverse("capstone:peer_assessment_save", args=[assessment.pk]),
        {**level_post(course, "partial"), "comment": "Clear."},
    )
    assert saved.status_code == 302
    assessment.refresh_from_db()
    assert assessment.completed_at is not None


def test_a_missing_level_is_a_400_naming_the_criterion(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    learners = learners_with_plans(course, 2)
    assessment = peer_assign(assessor=learners[0], course=course, now=timezone.now())
    assert assessment is not None
    client.force_login(learners[0])
    posted = level_post(course, "partial")
    posted.popitem()
    posted["comment"] = "x" * 10
    answer = client.post(reverse("capstone:peer_assessment_save", args=[assessment.pk]), posted)
    assert answer.status_code == 400
    assert "Choose a level." in answer.content.decode()
    hostile = {**level_post(course, "partial"), "comment": "x" * 5000}
    answer = client.post(reverse("capstone:peer_assessment_save", args=[assessment.pk]), hostile)
    assert answer.status_code == 400
    # Another learner's assessment is a 404.
    client.force_login(learners[1])
    assert client.get(reverse("capstone:peer_assessment", args=[assessment.pk])).status_code == 404


def test_the_learner_sees_the_peer_grade_with_comments_and_confidence(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    learners = learners_with_plans(course, 4)
    now = timezone.now()
    for _round in range(3):
        for learner in learners:
            a = peer_assign(assessor=learner, course=course, now=now)
            if a:
                peer_assessment_submit(
                    assessor=learner,
                    assessment_id=a.pk,
                    choices=choices(course, "strong", "Memory maths checks out."),
                    comment="A careful plan.",
                    now=now,
                )
    peer_plans_grade(course=course, now=now)
    client.force_login(learners[0])
    plan = plan_of(learners[0], course)
    page = client.get(reverse("capstone:peer_grade", args=[plan.submission_id])).content.decode()
    assert "graded by your peers" in page
    assert "Memory maths checks out." in page and "A careful plan." in page
    assert "confidence" in page
    client.force_login(learners[1])
    assert client.get(reverse("capstone:peer_grade", args=[plan.submission_id])).status_code == 404


def test_instructor_settings_and_the_flagged_plan_in_the_queue(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    instructor = course.enrollments.get(role="instructor").user
    [learner] = learners_with_plans(course, 1)
    client.force_login(instructor)
    url = reverse("capstone:peer_settings", kwargs={"course_slug": course.slug})
    bad = client.post(
        url, {"enabled": "on", "assessors_per_plan": "0", "calibration_attempts": "3"}
    )
    assert bad.status_code == 400 and "assessors per plan" in bad.content.decode().lower()
    ok = client.post(
        url,
        {
            "enabled": "on",
            "assessors_per_plan": "2",
            "calibration_attempts": "3",
            "deadline": "2020-01-01T00:00",
        },
    )
    assert ok.status_code == 302
    peer_deadline_sweep(course=course, now=timezone.now())
    assert plan_of(learner, course).state == PeerPlan.State.FLAGGED
    queue = client.get(reverse("capstone:grading_queue")).content.decode()
    assert "flagged by peers" in queue
    grade_page = client.get(
        reverse("capstone:grade", args=[plan_of(learner, course).submission_id])
    )
    assert "Only 0 of 2 peer assessments by the deadline." in grade_page.content.decode()
    # A learner cannot open the settings.
    client.force_login(learner)
    assert client.get(url).status_code == 403
    other = InstructorFactory()
    client.force_login(other)
    assert client.get(url).status_code == 404


def test_the_submitted_version_links_to_the_peer_step(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    [learner] = learners_with_plans(course, 1)
    client.force_login(learner)
    page = client.get(reverse("capstone:submission", args=[plan_of(learner, course).submission_id]))
    assert reverse("capstone:peer", kwargs={"course_slug": course.slug}) in page.content.decode()


def test_staff_add_calibration_examples_and_peer_settings_in_the_admin(client) -> None:  # type: ignore[no-untyped-def]
    from accounts.models import User
    from planner.capstone.peer_models import CalibrationExample

    course = peer_course()
    client.force_login(User.objects.create_superuser(email="admin@example.com", password="x"))
    memory = Criterion.objects.get(rubric__course=course, key="memory")
    operability = Criterion.objects.get(rubric__course=course, key="operability")
    base = {
        "course": course.pk,
        "title": "A plan that fits on paper",
        "plan": "7B at fp16 on a 16 GB GPU.",
        "position": "0",
        "staff_levels-TOTAL_FORMS": "1",
        "staff_levels-INITIAL_FORMS": "0",
        "staff_levels-0-criterion": memory.pk,
        "staff_levels-0-why": "Weights alone fill the card.",
    }
    wrong = {**base, "staff_levels-0-level": operability.levels.first().pk}
    refused = client.post(reverse("admin:planner_calibrationexample_add"), wrong)
    assert refused.status_code == 200 and not CalibrationExample.objects.exists()
    right = {**base, "staff_levels-0-level": memory.levels.get(key="missing").pk}
    assert client.post(reverse("admin:planner_calibrationexample_add"), right).status_code == 302
    assert CalibrationExample.objects.get().staff_levels.get().why == "Weights alone fill the card."
    for name in ("peersettings", "peerplan", "calibrationexample"):
        assert client.get(reverse(f"admin:planner_{name}_changelist")).status_code == 200


def test_an_instructors_released_grade_overrides_the_peer_grade(client) -> None:  # type: ignore[no-untyped-def]
    from planner.capstone.grading import ScoreInput, grade_regrade, submission_claim

    course = peer_course()
    instructor = course.enrollments.get(role="instructor").user
    learners = learners_with_plans(course, 4)
    now = timezone.now()
    for _round in range(3):
        for learner in learners:
            a = peer_assign(assessor=learner, course=course, now=now)
            if a:
                peer_assessment_submit(
                    assessor=learner,
                    assessment_id=a.pk,
                    choices=choices(course, "strong"),
                    comment="",
                    now=now,
                )
    peer_plans_grade(course=course, now=now)
    plan = plan_of(learners[0], course)
    submission_claim(grader=instructor, submission_id=plan.submission_id, now=now)
    # The peers' grade is released (in the gradebook): the instructor's replaces it by regrade.
    grade_regrade(
        grader=instructor,
        submission_id=plan.submission_id,
        now=now,
        scores=[
            ScoreInput(c.pk, c.levels.get(key="partial").pk)
            for c in Criterion.objects.filter(rubric__course=course)
        ],
        overall_feedback="Staff grade.",
    )
    client.force_login(learners[0])
    page = client.get(reverse("capstone:peer_grade", args=[plan.submission_id])).content.decode()
    assert "their grade replaces your peers" in page


def test_a_learner_assesses_their_own_plan_once(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    [learner] = learners_with_plans(course, 1)
    client.force_login(learner)
    url = reverse("capstone:peer_self", kwargs={"course_slug": course.slug})
    assert client.post(url, {**level_post(course, "strong"), "comment": "Mine."}).status_code == 302
    assert PeerAssessment.objects.filter(assessor=learner, kind="self").count() == 1
    again = client.post(url, level_post(course, "missing"), follow=True)
    assert "already assessed your own plan" in again.content.decode()
    assert PeerAssessment.objects.filter(assessor=learner, kind="self").count() == 1
