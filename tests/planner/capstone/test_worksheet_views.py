"""Learner pages: the list, the autosaved worksheet, submit, a version's page; scoping; escaping."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from planner.capstone.grading import ScoreInput, grade_release, grade_save_draft, submission_claim
from planner.models import CapstoneSubmission, CapstoneWorksheet
from tests.factories import CourseFactory, EnrollmentFactory, UserFactory
from tests.planner.factories import (
    GOOD_PLAN,
    WorkloadCardFactory,
    course_taught_by,
    submission_for,
)

pytestmark = pytest.mark.django_db

XSS = '<script>window.pwned=1</script><img src=x onerror="alert(1)">'


def form_data(**overrides: object) -> dict[str, object]:
    data = {k: ("" if v is None else v) for k, v in GOOD_PLAN.items()}
    data.update(overrides)
    return data


def test_list_shows_an_empty_state_without_a_course(client, learner) -> None:  # type: ignore[no-untyped-def]
    client.force_login(learner)
    response = client.get(reverse("capstone:list"))
    assert response.status_code == 200
    assert b'data-testid="capstone-empty"' in response.content


def test_list_shows_status_of_own_submissions_only(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(title="GPUs")
    mine = submission_for(learner, course)
    submission_for(UserFactory(), course, feature="Someone else's plan")
    client.force_login(learner)
    response = client.get(reverse("capstone:list"))
    html = response.content.decode()
    assert "GPUs" in html and "Awaiting grade" in html
    assert reverse("capstone:submission", kwargs={"submission_id": mine.pk}) in html
    assert html.count("Version 1") == 1


def test_list_invites_to_start_when_enrolled_without_a_plan(client, learner) -> None:  # type: ignore[no-untyped-def]
    EnrollmentFactory(user=learner)
    client.force_login(learner)
    response = client.get(reverse("capstone:list"))
    assert b'data-testid="no-submissions"' in response.content
    assert b"Start the worksheet" in response.content


def test_worksheet_needs_an_enrolment(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    client.force_login(learner)
    assert client.get(reverse("capstone:worksheet", args=[course.slug])).status_code == 404
    EnrollmentFactory(user=learner, course=course)
    assert client.get(reverse("capstone:worksheet", args=[course.slug])).status_code == 200


def test_htmx_autosave_answers_saved_at_and_stores_the_draft(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    response = client.post(
        reverse("capstone:worksheet_save", args=[course.slug]),
        form_data(feature="Nightly embedding refresh"),
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Saved at" in html
    assert html.lstrip().startswith('<p id="save-status"')  # only the fragment
    assert "room for 11 active users" in html
    assert 'data-testid="calculator-misfit"' not in html  # 10 peak users fit in room for 11
    worksheet = CapstoneWorksheet.objects.get(learner=learner, course=course)
    assert worksheet.feature == "Nightly embedding refresh"
    # A peak the memory cannot hold is flagged as the learner types, before any submit.
    html = client.post(
        reverse("capstone:worksheet_save", args=[course.slug]),
        form_data(concurrency=20),
        headers={"HX-Request": "true"},
    ).content.decode()
    assert "Your 20 peak users do not fit." in html
    assert worksheet.calculator_result["max_active_users"] == 11


def test_autosave_with_a_bad_number_names_the_field(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    response = client.post(
        reverse("capstone:worksheet_save", args=[course.slug]),
        form_data(gpu_memory_gb="lots"),
        headers={"HX-Request": "true"},
    )
    assert "Not saved: GPU memory (GB)" in response.content.decode()


@pytest.mark.parametrize("htmx", [True, False])
def test_a_refused_first_save_writes_no_draft(client, learner, htmx: bool) -> None:  # type: ignore[no-untyped-def]
    """A learner's first save with a number out of range answers with the field's error and
    leaves no empty draft behind; the next valid save creates it."""
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    url = reverse("capstone:worksheet_save", args=[course.slug])
    headers = {"HX-Request": "true"} if htmx else {}

    client.post(url, form_data(context_tokens="2000000000"), headers=headers)
    assert not CapstoneWorksheet.objects.filter(learner=learner).exists()

    client.post(url, form_data(), headers=headers)
    assert CapstoneWorksheet.objects.get(learner=learner).feature


def test_submit_creates_a_version_and_redirects_to_it(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    response = client.post(
        reverse("capstone:worksheet_submit", args=[course.slug]), form_data(concurrency=20)
    )
    submission = CapstoneSubmission.objects.get(learner=learner)
    assert response.status_code == 302
    assert response.url == reverse("capstone:submission", kwargs={"submission_id": submission.pk})
    page = client.get(response.url).content.decode()
    assert 'data-code="target_users_do_not_fit"' in page
    assert 'data-testid="grade-pending"' in page


def test_submit_without_a_feature_names_the_field(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    response = client.post(
        reverse("capstone:worksheet_submit", args=[course.slug]), form_data(feature="")
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "Feature: This field is required to submit." in page
    assert not CapstoneSubmission.objects.exists()
    # The rest of the page was saved: the summary says so and links to the field to fix.
    assert "Your draft is saved, but the plan was not submitted" in page
    assert '<a href="#id_feature">Feature: This field is required to submit.</a>' in page
    assert "Saved, but not submitted:" in page
    assert CapstoneWorksheet.objects.get(learner=learner).model_name == GOOD_PLAN["model_name"]


def test_worksheet_lists_own_cards_with_details_or_points_to_the_calculator(
    client, learner
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    url = reverse("capstone:worksheet", args=[course.slug])
    page = client.get(url).content.decode()
    assert 'data-testid="no-cards"' in page and reverse("planner:calculator") in page
    WorkloadCardFactory(owner=learner, name="Chat at peak", result={"max_active_users": 11})
    WorkloadCardFactory(owner=UserFactory(), name="Someone else's card")
    page = client.get(url).content.decode()
    assert "Chat at peak (Interactive serving, 7B instruct, room for 11 active users)" in page
    assert "Someone else" not in page and 'data-testid="no-cards"' not in page


def test_another_learners_submission_is_404(client, learner) -> None:  # type: ignore[no-untyped-def]
    other = submission_for(UserFactory(), CourseFactory())
    client.force_login(learner)
    response = client.get(reverse("capstone:submission", kwargs={"submission_id": other.pk}))
    assert response.status_code == 404


def test_grade_is_invisible_until_released(client, learner, instructor) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor)
    submission = submission_for(learner, course)
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    scores = [
        ScoreInput(
            criterion_id=c.pk, level_id=c.levels.get(key="strong").pk, comment=f"Comment on {c.key}"
        )
        for c in course.rubric.criteria.all()
    ]
    grade_save_draft(
        grader=instructor,
        submission_id=submission.pk,
        scores=scores,
        overall_feedback="Secret draft",
        now=now,
    )
    client.force_login(learner)
    url = reverse("capstone:submission", kwargs={"submission_id": submission.pk})
    page = client.get(url).content.decode()
    assert "Secret draft" not in page and "Comment on memory" not in page
    assert 'data-testid="grade-pending"' in page
    listing = client.get(reverse("capstone:list")).content.decode()
    assert "Awaiting grade" in listing and "Released" not in listing and "/ 8" not in listing

    grade_release(
        grader=instructor,
        submission_id=submission.pk,
        now=now,
        scores=scores,
        overall_feedback="Released words",
    )
    page = client.get(url).content.decode()
    assert "Released words" in page and "Comment on memory" in page
    assert "Your grade: 8 / 8" in page
    assert "Strong" in page
    listing = client.get(reverse("capstone:list")).content.decode()
    assert "8 / 8" in listing and "Released" in listing and "Awaiting grade" not in listing


def test_script_and_html_in_a_plan_are_escaped_everywhere(client, learner, instructor) -> None:  # type: ignore[no-untyped-def]
    """Learner and grader pages render submitted text as text, never as markup."""
    course = course_taught_by(instructor)
    submission = submission_for(learner, course, feature=XSS, user_problem=XSS, plan_owner=XSS)
    client.force_login(learner)
    pages = [
        client.get(reverse("capstone:submission", kwargs={"submission_id": submission.pk})),
        client.get(reverse("capstone:worksheet", args=[course.slug])),
    ]
    client.force_login(instructor)
    pages.append(client.get(reverse("capstone:grade", kwargs={"submission_id": submission.pk})))
    for response in pages:
        html = response.content.decode()
        assert response.status_code == 200
        assert "<script>window.pwned" not in html
        assert 'onerror="alert(1)"' not in html
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html


def test_a_pasted_comparison_link_is_checked_and_shown(client, learner) -> None:  # type: ignore[no-untyped-def]
    """A link the comparison refuses names the field; a good one shows its recommendation on the
    worksheet, and the submitted version's check flags a CPU recommendation it rejects."""
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    save = reverse("capstone:worksheet_save", args=[course.slug])
    bad = client.post(save, form_data(paths_query="/planner/paths/?estimate=serving&users=-4"))
    assert bad.status_code == 400
    assert "Path comparison (its link): the comparison" in bad.content.decode()
    assert "users: must not be negative" in bad.content.decode()
    link = (
        "/planner/paths/?estimate=serving&model=llama-3.1-8b&users=20&context_tokens=8192"
        "&ttft_target_ms=2000&requests_per_day=1000"
    )
    assert client.post(save, form_data(paths_query=link, recommendation="cpu")).status_code == 302
    page = client.get(reverse("capstone:worksheet", args=[course.slug])).content.decode()
    assert "The attached comparison recommends <strong>Managed model API" in page
    response = client.post(
        reverse("capstone:worksheet_submit", args=[course.slug]),
        form_data(paths_query=link, recommendation="cpu"),
    )
    version = client.get(response.url).content.decode()
    assert 'data-code="recommendation_rejected"' in version
    assert 'data-testid="check-comparison"' in version
