"""Instructor pages: permissions, the queue and its statuses, claims, grading, rubric, CSV."""

from __future__ import annotations

import csv
import io

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from planner.capstone.grading import ScoreInput, grade_save_draft, submission_claim
from planner.capstone.outbox import CapstoneEmail
from planner.models import Criterion, Grade, GradingClaim, Level
from tests.factories import InstructorFactory, UserFactory
from tests.planner.factories import course_taught_by, submission_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def course(instructor):  # type: ignore[no-untyped-def]
    return course_taught_by(instructor, title="GPUs, TPUs")


@pytest.fixture
def submission(learner, course):  # type: ignore[no-untyped-def]
    return submission_for(learner, course)


def grade_post(course, pick: str = "strong", **extra: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    data = {"overall_feedback": "Clear plan."}
    for criterion in course.rubric.criteria.all():
        data[f"level_{criterion.pk}"] = str(criterion.levels.get(key=pick).pk)
        data[f"comment_{criterion.pk}"] = f"About {criterion.key}"
    data.update(extra)
    return data


def instructor_urls(submission, course) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    sid = {"submission_id": submission.pk}
    return [
        ("get", reverse("capstone:grade", kwargs=sid)),
        ("post", reverse("capstone:claim", kwargs=sid)),
        ("post", reverse("capstone:grade_save", kwargs=sid)),
        ("get", reverse("capstone:export", args=[course.slug])),
        ("get", reverse("capstone:rubric", args=[course.slug])),
    ]


def test_learner_gets_403_on_instructor_pages(client, learner, submission, course) -> None:  # type: ignore[no-untyped-def]
    client.force_login(learner)
    assert client.get(reverse("capstone:grading_queue")).status_code == 403
    for method, url in instructor_urls(submission, course):
        assert getattr(client, method)(url).status_code == 403, url


def test_instructor_of_another_course_gets_404(client, submission, course) -> None:  # type: ignore[no-untyped-def]
    other = InstructorFactory()
    course_taught_by(other)
    client.force_login(other)
    for method, url in instructor_urls(submission, course):
        assert getattr(client, method)(url).status_code == 404, url
    queue = client.get(reverse("capstone:grading_queue")).content.decode()
    assert 'data-testid="queue-empty"' in queue
    assert not GradingClaim.objects.exists()


def test_queue_filters_by_course_and_status(client, instructor, learner, course) -> None:  # type: ignore[no-untyped-def]
    ungraded = submission_for(learner, course)
    claimed = submission_for(UserFactory(display_name="Cara Claimed"), course)
    graded = submission_for(UserFactory(display_name="Gus Graded"), course)
    other_course = course_taught_by(instructor, title="Other course")
    elsewhere = submission_for(UserFactory(display_name="Elsa Elsewhere"), other_course)
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=claimed.pk, now=now)
    submission_claim(grader=instructor, submission_id=graded.pk, now=now)
    grade_save_draft(
        grader=instructor,
        submission_id=graded.pk,
        scores=[
            ScoreInput(criterion_id=c.pk, level_id=c.levels.first().pk)
            for c in course.rubric.criteria.all()
        ],
        overall_feedback="",
        now=now,
    )
    client.force_login(instructor)
    url = reverse("capstone:grading_queue")

    def names(**params: object) -> set[str]:
        rows = client.get(url, params).context["rows"]
        return {row.learner.name for row in rows}

    assert names() == {"Lee Learner", "Cara Claimed", "Gus Graded", "Elsa Elsewhere"}
    assert names(course=course.slug) == {"Lee Learner", "Cara Claimed", "Gus Graded"}
    assert names(course=course.slug, status="ungraded") == {"Lee Learner"}
    assert names(status="in_progress") == {"Cara Claimed"}
    assert names(status="graded") == {"Gus Graded"}
    assert names(status="released") == set()
    assert names(course=other_course.slug) == {"Elsa Elsewhere"}
    assert names(course=other_course.pk) == {"Elsa Elsewhere"}  # older links by id still work
    assert len(names(course="not-a-course-i-teach")) == 4  # an unknown course filters nothing
    page = client.get(url, {"course": course.slug}).content.decode()
    assert f'<option value="{course.slug}" selected>' in page
    assert reverse("capstone:export", kwargs={"course_slug": course.slug}) in page
    assert ungraded and elsewhere


def test_second_grader_sees_who_holds_the_claim(client, instructor, course, submission) -> None:  # type: ignore[no-untyped-def]
    client.force_login(instructor)
    claim_url = reverse("capstone:claim", kwargs={"submission_id": submission.pk})
    queue_url = reverse("capstone:grading_queue")
    # The queue offers the claim; claiming opens the grade page at the rubric.
    assert f'action="{claim_url}"' in client.get(queue_url).content.decode()
    response = client.post(claim_url)
    grade_url = reverse("capstone:grade", kwargs={"submission_id": submission.pk})
    assert response.url == grade_url + "#rubric"
    colleague = InstructorFactory(display_name="Cole League")
    course.enrollments.create(user=colleague, role="instructor")
    client.force_login(colleague)
    queue = client.get(queue_url).content.decode()
    assert "Ida Instructor until" in queue and f'action="{claim_url}"' not in queue
    response = client.post(
        reverse("capstone:claim", kwargs={"submission_id": submission.pk}), follow=True
    )
    html = response.content.decode()
    assert "Ida Instructor is grading this submission" in html
    assert 'data-testid="claim-holder"' in html
    assert GradingClaim.objects.get().grader == instructor
    # Without the claim the grading form cannot be saved.
    response = client.post(
        reverse("capstone:grade_save", kwargs={"submission_id": submission.pk}), grade_post(course)
    )
    assert response.status_code == 409
    assert not Grade.objects.exists()


def test_grade_page_shows_plan_check_and_rubric_with_radios(
    client, instructor, course, submission
) -> None:  # type: ignore[no-untyped-def]
    client.force_login(instructor)
    client.post(reverse("capstone:claim", kwargs={"submission_id": submission.pk}))
    html = client.get(
        reverse("capstone:grade", kwargs={"submission_id": submission.pk})
    ).content.decode()
    assert 'data-testid="automatic-check"' in html
    assert "Live lesson chat" in html
    for criterion in course.rubric.criteria.all():
        assert f"<legend>{criterion.title}</legend>" in html
        for level in criterion.levels.all():
            assert f'type="radio" name="level_{criterion.pk}" id="level-{level.pk}"' in html
    assert 'name="action" value="release"' in html


def test_save_draft_then_release_sends_the_email(
    client, instructor, learner, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    client.force_login(instructor)
    client.post(reverse("capstone:claim", kwargs={"submission_id": submission.pk}))
    save = reverse("capstone:grade_save", kwargs={"submission_id": submission.pk})
    response = client.post(save, grade_post(course, "partial", action="draft"))
    assert response.status_code == 302
    grade = Grade.objects.get()
    assert (grade.status, grade.total_points) == ("draft", 4)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(save, grade_post(course, "strong", action="release"))
    assert response.status_code == 302
    grade.refresh_from_db()
    assert (grade.status, grade.total_points) == ("released", 8)
    assert [m.to for m in mail.outbox] == [[learner.email]]


def test_release_with_a_criterion_unscored_names_it(client, instructor, course, submission) -> None:  # type: ignore[no-untyped-def]
    client.force_login(instructor)
    client.post(reverse("capstone:claim", kwargs={"submission_id": submission.pk}))
    data = grade_post(course, action="release")
    operability = course.rubric.criteria.get(key="operability")
    del data[f"level_{operability.pk}"]
    response = client.post(
        reverse("capstone:grade_save", kwargs={"submission_id": submission.pk}), data
    )
    assert response.status_code == 400
    assert (
        "Choose a level for every criterion before releasing: Operability"
        in response.content.decode()
    )
    assert not Grade.objects.filter(status="released").exists()


def test_csv_has_one_row_per_learner_with_criterion_columns(
    client, instructor, learner, course, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    first = submission_for(learner, course)
    client.force_login(instructor)
    client.post(reverse("capstone:claim", kwargs={"submission_id": first.pk}))
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("capstone:grade_save", kwargs={"submission_id": first.pk}),
            grade_post(course, action="release"),
        )
    submission_for(learner, course)  # version 2, not graded yet
    submission_for(UserFactory(email="=cmd@example.com", display_name="=HYPERLINK()"), course)
    response = client.get(reverse("capstone:export", args=[course.slug]))
    assert response["Content-Type"].startswith("text/csv")
    assert response.streaming  # read as it is written: constant memory at any course size
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == [
        "learner_email",
        "learner_name",
        "version",
        "submitted_at",
        "late",
        "memory",
        "operability",
        "total",
        "max",
        "released",
        "released_at",
        "graded_by",
    ]
    by_email = {row[0]: row for row in rows[1:]}
    assert len(rows) == 3
    lee = by_email["learner@example.com"]
    assert (lee[2], lee[5], lee[6], lee[7], lee[8], lee[9]) == ("1", "4", "4", "8", "8", "yes")
    assert lee[11] == "instructor"
    other = by_email["'=cmd@example.com"]
    assert other[1] == "'=HYPERLINK()" and other[9] == "no" and other[11] == ""


def test_rubric_editing_adds_a_criterion_and_its_levels(client, instructor, course) -> None:  # type: ignore[no-untyped-def]
    client.force_login(instructor)
    response = client.post(
        reverse("capstone:rubric", args=[course.slug]),
        {
            "new-key": "cost",
            "new-title": "Cost per useful result",
            "new-description": "",
            "new-position": "3",
        },
    )
    criterion = Criterion.objects.get(key="cost")
    assert response.url == reverse("capstone:criterion", args=[course.slug, criterion.pk])
    response = client.post(
        response.url,
        {
            "key": "cost",
            "title": "Cost per useful result",
            "description": "$ per answer",
            "position": "3",
            "levels-TOTAL_FORMS": "1",
            "levels-INITIAL_FORMS": "0",
            "levels-MIN_NUM_FORMS": "0",
            "levels-MAX_NUM_FORMS": "1000",
            "levels-0-key": "clear",
            "levels-0-title": "Clear",
            "levels-0-points": "3",
            "levels-0-description": "Worked out",
            "levels-0-position": "0",
        },
    )
    assert response.status_code == 302
    assert list(Level.objects.filter(criterion=criterion).values_list("title", "points")) == [
        ("Clear", 3)
    ]
    page = client.get(reverse("capstone:rubric", args=[course.slug])).content.decode()
    assert "Cost per useful result" in page and "Clear — 3 points" in page


def test_level_without_points_is_refused_naming_the_field(client, instructor, course) -> None:  # type: ignore[no-untyped-def]
    client.force_login(instructor)
    criterion = course.rubric.criteria.get(key="memory")
    url = reverse("capstone:criterion", args=[course.slug, criterion.pk])
    page = client.get(url).content.decode()
    assert page.count("Delete this level") == 3  # the existing levels; not the blank new one
    data = {
        "key": "memory",
        "title": "Memory and KV estimate",
        "description": "",
        "position": "0",
        "levels-TOTAL_FORMS": "1",
        "levels-INITIAL_FORMS": "0",
        "levels-MIN_NUM_FORMS": "0",
        "levels-MAX_NUM_FORMS": "1000",
        "levels-0-key": "checked",
        "levels-0-title": "Checked",
        "levels-0-points": "",
        "levels-0-description": "",
        "levels-0-position": "3",
    }
    response = client.post(url, data)
    assert response.status_code == 400
    assert "Points: This field is required." in response.content.decode()
    assert not criterion.levels.filter(key="checked").exists()


def test_rubric_of_another_course_is_404(client, course) -> None:  # type: ignore[no-untyped-def]
    other = InstructorFactory()
    client.force_login(other)
    criterion = course.rubric.criteria.first()
    assert (
        client.get(reverse("capstone:criterion", args=[course.slug, criterion.pk])).status_code
        == 404
    )


def test_regrade_of_a_released_grade_is_recorded_and_shown(
    client, instructor, learner, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """After release the page offers a regrade (after a new claim); the change is in the history."""
    client.force_login(instructor)
    claim_url = reverse("capstone:claim", kwargs={"submission_id": submission.pk})
    save = reverse("capstone:grade_save", kwargs={"submission_id": submission.pk})
    client.post(claim_url)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(save, grade_post(course, "strong", action="release"))
    page = client.get(
        reverse("capstone:grade", kwargs={"submission_id": submission.pk})
    ).content.decode()
    assert 'data-testid="grade-released"' in page and "Claim to regrade" in page
    client.post(claim_url)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(save, grade_post(course, "missing", action="regrade"), follow=True)
    html = response.content.decode()
    assert "Regrade recorded" in html
    assert "Regraded after release" in html and "total_points 8 → 0" in html
    grade = Grade.objects.get()
    assert (grade.status, grade.total_points) == ("released", 0)
    assert len(mail.outbox) == 1  # the release's; the regrade's waits for its quiet period
    changed = CapstoneEmail.objects.get(kind=CapstoneEmail.Kind.GRADE_CHANGED)
    assert changed.status == CapstoneEmail.Status.PENDING and changed.quiet_until is not None


def test_giving_up_a_claim_frees_the_submission(client, instructor, submission) -> None:  # type: ignore[no-untyped-def]
    client.force_login(instructor)
    client.post(reverse("capstone:claim", kwargs={"submission_id": submission.pk}))
    assert GradingClaim.objects.exists()
    response = client.post(reverse("capstone:unclaim", kwargs={"submission_id": submission.pk}))
    assert response.url == reverse("capstone:grading_queue")
    assert not GradingClaim.objects.exists()


def test_release_email_task_runs_on_the_email_queue() -> None:
    from planner.tasks import capstone_email_send

    assert capstone_email_send.queue == "email"


def _many_submissions(course, count: int, start_at: int = 0) -> list:  # type: ignore[no-untyped-def]
    """`count` learners' first versions, three to a second (ties the keyset must break)."""
    from datetime import timedelta

    from planner.models import CapstoneSubmission
    from tests.planner.factories import worksheet_for

    base = timezone.now() - timedelta(days=30)
    rows = []
    for n in range(start_at, start_at + count):
        learner = UserFactory(display_name=f"Learner {n:03d}", email=f"l{n:03d}@example.com")
        rows.append(
            CapstoneSubmission(
                worksheet=worksheet_for(learner, course), learner=learner, course=course,
                version=1, submitted_at=base + timedelta(seconds=n // 3),
            )
        )  # fmt: skip
    return CapstoneSubmission.objects.bulk_create(rows)


def test_queue_pages_by_fifty_oldest_first_with_counts(client, instructor, course) -> None:  # type: ignore[no-untyped-def]
    """Every plan appears once, oldest first, 50 a page; each status shows its count; a page
    costs the same number of queries however long the queue."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _many_submissions(course, 60)
    client.force_login(instructor)
    url = reverse("capstone:grading_queue")
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    later = _many_submissions(course, 60, start_at=60)
    submission_claim(grader=instructor, submission_id=later[-1].pk, now=timezone.now())
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        with CaptureQueriesContext(connection) as many:
            response = client.get(url, {"after": after} if after else {})
        pages += 1
        seen += [row.learner.email for row in response.context["rows"]]
        after = response.context["next_after"]
        if after is None:
            break
        assert len(response.context["rows"]) == 50
        assert 'rel="next"' in response.content.decode()
    assert pages == 3 and seen == [f"l{n:03d}@example.com" for n in range(120)]
    assert len(many.captured_queries) <= len(few.captured_queries) + 1  # +1: the anchor row
    page = client.get(url).content.decode()
    assert "Ungraded (119)" in page and "In progress (1)" in page and "Released (0)" in page
    assert "120 submitted plans match" in page
    ungraded = client.get(url, {"status": "ungraded", "after": later[-3].pk}).context["rows"]
    # The last is claimed: in progress, not ungraded.
    assert [row.pk for row in ungraded] == [later[-2].pk]


@pytest.mark.parametrize("after", ["abc", "-1", "1.5", "99999999999999999999", "1" * 40])
def test_a_bad_page_anchor_is_a_400_naming_the_field(client, instructor, after: str) -> None:  # type: ignore[no-untyped-def]
    client.force_login(instructor)
    response = client.get(reverse("capstone:grading_queue"), {"after": after})
    assert response.status_code == 400 and b"after" in response.content
