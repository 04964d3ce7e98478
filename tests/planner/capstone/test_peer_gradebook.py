"""A plan graded by its peers is in the gradebook: a released grade marked as the peers', in the
instructor's CSV with who graded, on the learner's page, announced in one email; finalising
again writes nothing more; an instructor's regrade replaces it, and an instructor's grade begun
first is never overwritten."""

from __future__ import annotations

import csv
import io

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from planner.capstone.grading import ScoreInput, grade_save_draft, submission_claim
from planner.capstone.outbox import CapstoneEmail
from planner.capstone.peer_gradebook import peer_grade_record
from planner.capstone.peer_grading import peer_plans_grade
from planner.capstone.peer_models import PeerPlan
from planner.models import Criterion, Grade, GradeChange
from tests.planner.capstone.peer_helpers import (
    assess_all,
    learners_with_plans,
    peer_course,
    plan_of,
    split_plan,
)

pytestmark = pytest.mark.django_db


def graded_by_peers(django_capture_on_commit_callbacks, level: str = "strong"):  # type: ignore[no-untyped-def]
    """Four learners whose peers all agree on `level`; graded (twice), the emails sent."""
    course = peer_course()
    learners = learners_with_plans(course, 4)
    assess_all(course, learners, lambda learner, a: level)
    with django_capture_on_commit_callbacks(execute=True):
        assert len(peer_plans_grade(course=course, now=timezone.now())) == 4
        assert peer_plans_grade(course=course, now=timezone.now()) == []
    return course, learners


def csv_rows(client, course) -> dict[str, dict[str, str]]:  # type: ignore[no-untyped-def]
    response = client.get(reverse("capstone:export", args=[course.slug]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    return {row["learner_email"]: row for row in rows}


def level_post(course, key: str, action: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    data = {"overall_feedback": "Reviewed by staff.", "action": action}
    for c in Criterion.objects.filter(rubric__course=course):
        data[f"level_{c.pk}"] = str(c.levels.get(key=key).pk)
    return data


def test_the_peer_grade_is_released_into_the_gradebook_with_one_email(
    django_capture_on_commit_callbacks,
) -> None:  # type: ignore[no-untyped-def]
    course, learners = graded_by_peers(django_capture_on_commit_callbacks)
    plan = plan_of(learners[0], course)
    grade = Grade.objects.get(submission=plan.submission)
    assert (grade.origin, grade.status, grade.grader) == ("peers", "released", None)
    assert (grade.total_points, grade.max_points, grade.released_at) == (8, 8, plan.graded_at)
    assert sorted(s.level.key for s in grade.scores.all()) == ["strong", "strong"]
    [change] = grade.changes.all()
    assert change.action == GradeChange.Action.PEER_GRADED and change.actor is None
    assert change.changes == {
        "memory.level": [None, "strong"],
        "operability.level": [None, "strong"],
    }
    assert Grade.objects.count() == 4
    # Finalising the plan again writes nothing: one grade, one email row, one email.
    with django_capture_on_commit_callbacks(execute=True):
        assert peer_grade_record(plan=plan, now=timezone.now()) is None
    assert Grade.objects.filter(submission=plan.submission).count() == 1
    assert CapstoneEmail.objects.filter(submission=plan.submission).count() == 1
    mine = [m for m in mail.outbox if m.to == [learners[0].email]]
    assert len(mine) == 1
    assert "graded by your peers" in mine[0].subject and "Your grade: 8 / 8." in mine[0].body


def test_the_learner_sees_the_peer_grade_once_released(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    learners = learners_with_plans(course, 4)
    plan = plan_of(learners[0], course)
    client.force_login(learners[0])
    page = reverse("capstone:submission", args=[plan.submission_id])
    assert 'data-testid="grade-pending"' in client.get(page).content.decode()
    assess_all(course, learners, lambda learner, a: "partial")
    with django_capture_on_commit_callbacks(execute=True):
        peer_plans_grade(course=course, now=timezone.now())
    body = client.get(page).content.decode()
    assert "Your grade: 4 / 8" in body and "Graded by your peers." in body
    assert reverse("capstone:peer_grade", args=[plan.submission_id]) in body
    assert "4 / 8" in client.get(reverse("capstone:list")).content.decode()
    # The peer grade page still shows the peers' grade: no instructor has replaced it.
    peer_page = client.get(reverse("capstone:peer_grade", args=[plan.submission_id])).content
    assert b"their grade replaces" not in peer_page and b"graded by your peers" in peer_page


def test_the_csv_says_peers_then_instructor_after_a_regrade(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course, learners = graded_by_peers(django_capture_on_commit_callbacks)
    instructor = course.enrollments.get(role="instructor").user
    plan = plan_of(learners[0], course)
    client.force_login(instructor)
    row = csv_rows(client, course)[learners[0].email]
    assert (row["memory"], row["operability"], row["total"], row["max"]) == ("4", "4", "8", "8")
    assert (row["released"], row["graded_by"]) == ("yes", "peers")
    # The instructor's page says whose grade it is; claiming and saving a regrade replaces it.
    grade_page = client.get(reverse("capstone:grade", args=[plan.submission_id])).content.decode()
    assert "Graded by the learner's peers" in grade_page
    client.post(reverse("capstone:claim", args=[plan.submission_id]))
    with django_capture_on_commit_callbacks(execute=True):
        saved = client.post(
            reverse("capstone:grade_save", args=[plan.submission_id]),
            level_post(course, "partial", "regrade"),
        )
    assert saved.status_code == 302
    row = csv_rows(client, course)[learners[0].email]
    assert (row["memory"], row["total"], row["graded_by"]) == ("2", "4", "instructor")
    grade = Grade.objects.get(submission=plan.submission)
    assert (grade.origin, grade.grader, grade.total_points) == ("instructor", instructor, 4)
    change = grade.changes.get(action=GradeChange.Action.REGRADED)
    assert change.actor == instructor and change.changes["origin"] == ["peers", "instructor"]
    # The learner is told once the regrades stop (the outbox's quiet period), and sees it.
    assert CapstoneEmail.objects.filter(grade=grade, kind="grade_changed").count() == 1
    client.force_login(learners[0])
    body = client.get(reverse("capstone:submission", args=[plan.submission_id])).content.decode()
    assert "Your grade: 4 / 8" in body and "Graded by your instructor." in body
    peer_page = client.get(reverse("capstone:peer_grade", args=[plan.submission_id])).content
    assert b"their grade replaces your peers" in peer_page


def test_an_instructor_confirming_the_peers_levels_makes_the_grade_theirs(
    django_capture_on_commit_callbacks,
) -> None:  # type: ignore[no-untyped-def]
    from planner.capstone.grading import grade_regrade

    course, learners = graded_by_peers(django_capture_on_commit_callbacks)
    instructor = course.enrollments.get(role="instructor").user
    plan = plan_of(learners[1], course)
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=plan.submission_id, now=now)
    same = [
        ScoreInput(c.pk, c.levels.get(key="strong").pk)
        for c in Criterion.objects.filter(rubric__course=course)
    ]
    grade = grade_regrade(
        grader=instructor,
        submission_id=plan.submission_id,
        scores=same,
        overall_feedback="",
        now=now,
    )
    assert (grade.origin, grade.total_points) == ("instructor", 8)
    assert grade.changes.filter(action=GradeChange.Action.REGRADED).count() == 1


def test_an_instructors_grade_begun_first_is_never_overwritten(
    django_capture_on_commit_callbacks,
) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    instructor = course.enrollments.get(role="instructor").user
    learners = learners_with_plans(course, 4)
    plan = plan_of(learners[0], course)
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=plan.submission_id, now=now)
    grade_save_draft(
        grader=instructor,
        submission_id=plan.submission_id,
        scores=[
            ScoreInput(c.pk, c.levels.get(key="missing").pk)
            for c in Criterion.objects.filter(rubric__course=course)
        ],
        overall_feedback="Started.",
        now=now,
    )
    assess_all(course, learners)
    with django_capture_on_commit_callbacks(execute=True):
        peer_plans_grade(course=course, now=now)
    plan.refresh_from_db()
    assert plan.state == PeerPlan.State.GRADED
    grade = Grade.objects.get(submission=plan.submission)
    assert (grade.origin, grade.status, grade.total_points) == ("instructor", "draft", 0)
    # Their learner hears from the instructor's release, not from the peers; the others do.
    assert not [m for m in mail.outbox if m.to == [learners[0].email]]
    assert len(mail.outbox) == 3


def test_a_flagged_plan_gets_no_grade() -> None:
    course = peer_course()
    learners = learners_with_plans(course, 4)
    target = split_plan(course, learners)
    peer_plans_grade(course=course, now=timezone.now())
    target.refresh_from_db()
    assert target.state == PeerPlan.State.FLAGGED
    assert not Grade.objects.filter(submission=target.submission).exists()
    assert Grade.objects.filter(origin="peers").count() == 3


def test_writing_a_peer_grade_costs_eight_statements(django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    course, learners = graded_by_peers(django_capture_on_commit_callbacks)
    plan = plan_of(learners[0], course)
    Grade.objects.filter(submission=plan.submission).delete()
    CapstoneEmail.objects.filter(submission=plan.submission).delete()
    with CaptureQueriesContext(connection) as queries:
        assert peer_grade_record(plan=plan, now=timezone.now()) is not None
    assert sum("SAVEPOINT" not in q["sql"] for q in queries.captured_queries) == 8
