"""Worksheet drafts, submitted versions (immutable, numbered, late-flagged), resubmission."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from planner.capstone.grading import ScoreInput, grade_release, submission_claim
from planner.capstone.services import (
    SubmissionNotAllowed,
    worksheet_autosave,
    worksheet_submit,
)
from planner.models import CapstoneSubmission, CapstoneWorksheet, SubmissionImmutableError
from tests.factories import CourseFactory, UserFactory
from tests.planner.factories import (
    WorkloadCardFactory,
    course_taught_by,
    submission_for,
    worksheet_for,
)

pytestmark = pytest.mark.django_db


def test_autosave_stores_fields_and_the_calculator_result(learner) -> None:  # type: ignore[no-untyped-def]
    """Saving the draft refreshes the stored engine result for the plan's numbers."""
    worksheet = worksheet_for(learner, CourseFactory())
    assert worksheet.calculator_result["max_active_users"] == 11
    worksheet_autosave(worksheet=worksheet, data={"gpu_memory_gb": 48, "feature": "Chat v2"})
    worksheet.refresh_from_db()
    assert worksheet.feature == "Chat v2"
    assert worksheet.calculator_result["max_active_users"] == 51


def test_autosave_attaches_only_the_learners_own_workload_cards(learner) -> None:  # type: ignore[no-untyped-def]
    worksheet = worksheet_for(learner, CourseFactory())
    mine = WorkloadCardFactory(owner=learner)
    worksheet_autosave(worksheet=worksheet, data={}, workload_cards=[mine])
    assert list(worksheet.workload_cards.all()) == [mine]
    with pytest.raises(ValidationError):
        worksheet_autosave(
            worksheet=worksheet, data={}, workload_cards=[WorkloadCardFactory(owner=UserFactory())]
        )


def test_submit_freezes_content_cards_and_check(learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    worksheet = worksheet_for(learner, course, concurrency=20)
    worksheet_autosave(
        worksheet=worksheet,
        data={},
        workload_cards=[WorkloadCardFactory(owner=learner, name="Chat card")],
    )
    submission = worksheet_submit(worksheet=worksheet, now=timezone.now())
    assert submission.version == 1
    assert submission.content["feature"] == "Live lesson chat"
    assert submission.content["concurrency"] == 20
    assert submission.workload_cards[0]["name"] == "Chat card"
    assert submission.calculator_result["max_active_users"] == 11
    codes = [f["code"] for f in submission.check_result["findings"]]
    assert "target_users_do_not_fit" in codes


def test_submitted_version_is_immutable(learner) -> None:  # type: ignore[no-untyped-def]
    """Editing the draft after submit leaves the version as submitted; saving a version fails."""
    course = CourseFactory()
    submission = submission_for(learner, course)
    worksheet_autosave(
        worksheet=CapstoneWorksheet.objects.get(learner=learner, course=course),
        data={"feature": "Something else"},
    )
    submission.refresh_from_db()
    assert submission.content["feature"] == "Live lesson chat"
    submission.content["feature"] = "Rewritten"
    with pytest.raises(SubmissionImmutableError):
        submission.save()
    submission.refresh_from_db()
    assert submission.content["feature"] == "Live lesson chat"


def test_submission_after_the_due_date_is_flagged_late(learner) -> None:  # type: ignore[no-untyped-def]
    due = timezone.now()
    on_time = submission_for(
        learner, CourseFactory(capstone_due_at=due), now=due - timedelta(minutes=1)
    )
    late = submission_for(
        learner, CourseFactory(capstone_due_at=due), now=due + timedelta(minutes=1)
    )
    no_due = submission_for(learner, CourseFactory(capstone_due_at=None))
    assert (on_time.is_late, late.is_late, no_due.is_late) == (False, True, False)
    assert late.due_at == due


def test_submit_requires_feature_and_recommendation(learner) -> None:  # type: ignore[no-untyped-def]
    worksheet = worksheet_for(learner, CourseFactory(), feature="", recommendation="")
    with pytest.raises(ValidationError) as exc:
        worksheet_submit(worksheet=worksheet, now=timezone.now())
    assert set(exc.value.message_dict) == {"feature", "recommendation"}
    assert not CapstoneSubmission.objects.exists()


def test_resubmission_waits_for_release_then_makes_a_new_version(learner, instructor) -> None:  # type: ignore[no-untyped-def]
    """A second version is refused while the first awaits its grade; after release it is v2."""
    course = course_taught_by(instructor)
    first = submission_for(learner, course)
    worksheet = first.worksheet
    with pytest.raises(SubmissionNotAllowed):
        worksheet_submit(worksheet=worksheet, now=timezone.now())

    now = timezone.now()
    submission_claim(grader=instructor, submission_id=first.pk, now=now)
    scores = [
        ScoreInput(criterion_id=c.pk, level_id=c.levels.last().pk, comment="ok")
        for c in course.rubric.criteria.all()
    ]
    grade_release(
        grader=instructor, submission_id=first.pk, now=now, scores=scores, overall_feedback=""
    )

    worksheet_autosave(worksheet=worksheet, data={"feature": "Live lesson chat, revised"})
    second = worksheet_submit(worksheet=worksheet, now=timezone.now())
    assert second.version == 2
    first.refresh_from_db()
    assert first.content["feature"] == "Live lesson chat"
    assert second.content["feature"] == "Live lesson chat, revised"


CPU_CHAT_LINK = (
    "https://recall.example/planner/paths/?estimate=serving&model=llama-3.1-8b&users=20"
    "&context_tokens=8192&ttft_target_ms=2000&requests_per_day=1000"
)


def test_an_attached_comparison_is_run_once_per_link_and_frozen_at_submit(learner) -> None:  # type: ignore[no-untyped-def]
    """The link's comparison is stored at save (our own address, whatever host was pasted), kept
    while the link stays, and a submitted version carries it and the check's verdict on it."""
    worksheet = worksheet_for(
        learner, CourseFactory(), recommendation="cpu", paths_query=CPU_CHAT_LINK
    )
    stored = worksheet.paths_comparison
    assert stored["recommended"]["path"] == "managed_api"
    assert stored["link"].startswith("/planner/paths/?estimate=serving")
    worksheet_autosave(worksheet=worksheet, data={"feature": "Chat v2"})
    worksheet.refresh_from_db()
    assert worksheet.paths_comparison == stored
    submission = worksheet_submit(worksheet=worksheet, now=timezone.now())
    assert submission.paths_comparison["recommended"]["path"] == "managed_api"
    codes = [f["code"] for f in submission.check_result["findings"]]
    assert "recommendation_rejected" in codes
    worksheet_autosave(worksheet=worksheet, data={"paths_query": ""})
    worksheet.refresh_from_db()
    assert worksheet.paths_comparison == {}
