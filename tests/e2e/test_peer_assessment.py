"""The peer step in the browser, on a desktop and a phone, axe-clean: a learner calibrates on an
example and sees the staff's level and why; assesses a peer's plan beside its automatic check;
reads the peer grade with comments and confidence and finds it in their gradebook; an instructor
lists the plans flagged by peers with why and overrides one; a link to an expired assignment
says so and offers another plan."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from planner.capstone.peer_assignment import (
    ASSIGNMENT_LEASE,
    peer_assessment_submit,
    peer_assign,
    peer_assignments_expire,
)
from planner.capstone.peer_grading import (
    peer_deadline_sweep,
    peer_plans_grade,
)
from planner.capstone.peer_models import PeerPlan
from planner.capstone.peer_services import (
    peer_settings_save,
)
from planner.models import Grade
from tests.conftest import login_in_browser
from tests.planner.capstone.peer_helpers import (
    calibration_example,
    choices,
    learners_with_plans,
    peer_course,
    plan_of,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [1280, 375]


def fits(page, width: int) -> None:  # type: ignore[no-untyped-def]
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("width", WIDTHS)
def test_calibrating_on_an_example(page, width: int) -> None:  # type: ignore[no-untyped-def]
    course = peer_course(attempts=2)
    calibration_example(course, "partial")
    [learner] = learners_with_plans(course, 1)
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, learner.email)
    page.goto(f"/capstone/courses/{course.slug}/peer/")
    section = page.get_by_test_id("calibration")
    for group in ("Memory and KV estimate", "Operability"):
        # From the keyboard: focus the first level, arrow to the next.
        section.get_by_role("group", name=group).get_by_label(re.compile("^Missing")).focus()
        page.keyboard.press("ArrowDown")
    page.get_by_role("button", name="Compare with the staff").click()
    feedback = page.get_by_test_id("calibration-feedback")
    feedback.wait_for()
    assert "Calibrated" in feedback.inner_text()
    assert "The staff's reason for memory." in feedback.inner_text()
    fits(page, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_assessing_a_peers_plan(page, width: int) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    learners = learners_with_plans(course, 3)
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, learners[0].email)
    page.goto(f"/capstone/courses/{course.slug}/peer/")
    page.get_by_role("button", name="Assess a peer's plan").click()
    page.get_by_test_id("automatic-check").wait_for()
    # Opened again by its address, so axe and the HTML checker read the assessment page too.
    page.goto(page.url)
    form = page.get_by_test_id("peer-form")
    form.get_by_role("group", name="Memory and KV estimate").get_by_label(
        re.compile("^Strong")
    ).check()
    form.get_by_role("group", name="Operability").get_by_label(re.compile("^Partial")).check()
    form.get_by_label("Comment on Memory and KV estimate (optional)").fill("The KV maths holds.")
    page.get_by_role("button", name="Save assessment").click()
    page.get_by_text("Assessment saved. Thank you.").wait_for()
    assert "You have assessed 1 of 3." in page.get_by_test_id("assessed-count").inner_text()
    fits(page, width)


def _graded_course():  # type: ignore[no-untyped-def]
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
                    choices=choices(course, "strong", "Sizing is explained step by step."),
                    comment="A plan I would deploy.",
                    now=now,
                )
    peer_plans_grade(course=course, now=now)
    return course, learners


@pytest.mark.parametrize("width", WIDTHS)
def test_receiving_a_peer_grade(page, width: int) -> None:  # type: ignore[no-untyped-def]
    course, learners = _graded_course()
    plan = plan_of(learners[0], course)
    assert plan.state == PeerPlan.State.GRADED
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, learners[0].email)
    page.goto(f"/capstone/courses/{course.slug}/peer/")
    page.get_by_role("link", name="See your peer grade").click()
    grade = page.get_by_test_id("peer-grade")
    grade.wait_for()
    text = grade.inner_text()
    assert "Strong" in text and "confidence" in text
    assert "Sizing is explained step by step." in text and "A plan I would deploy." in text
    page.goto(f"/capstone/submissions/{plan.submission_id}/")
    assert "Your grade: 8 / 8" in page.get_by_test_id("released-grade").inner_text()
    assert "Graded by your peers." in page.get_by_test_id("graded-by").inner_text()
    fits(page, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_an_instructor_overrides_a_flagged_plan(page, width: int) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    course = peer_course()
    instructor = course.enrollments.get(role="instructor").user
    [learner] = learners_with_plans(course, 1)
    peer_settings_save(
        course=course,
        enabled=True,
        assessors_per_plan=3,
        calibration_attempts=2,
        deadline=now - timedelta(hours=1),
    )
    peer_deadline_sweep(course=course, now=now)
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, instructor.email)
    page.goto(f"/capstone/grading/?course={course.slug}")
    page.get_by_label("Peers").select_option("flagged")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**peer=flagged**")
    page.goto(page.url)  # by its address, so axe and the HTML checker read the filtered queue
    assert page.get_by_test_id("peer-flag").count() == 1
    assert "Only 0 of 3 peer assessments" in page.get_by_test_id("peer-reasons").inner_text()
    link = page.get_by_role("link", name=re.compile(f"^{re.escape(learner.name)}, version 1"))
    page.goto(link.get_attribute("href"))
    assert "Only 0 of 3 peer assessments" in page.get_by_test_id("peer-flags").inner_text()
    page.get_by_test_id("claim-box").get_by_role("button", name="Claim to grade").click()
    page.get_by_text("Claimed: it is yours to grade").wait_for()
    for group in ("Memory and KV estimate", "Operability"):
        page.get_by_role("group", name=group).get_by_label(re.compile("^Partial")).check()
    page.get_by_role("button", name="Release grade").click()
    page.wait_for_url("**/capstone/grading/")
    assert Grade.objects.get(submission=plan_of(learner, course).submission).status == "released"
    fits(page, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_an_expired_assignment(page, width: int) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    learners = learners_with_plans(course, 3)
    taken = peer_assign(
        assessor=learners[0], course=course, now=timezone.now() - ASSIGNMENT_LEASE * 2
    )
    assert taken is not None
    peer_assignments_expire(course=course, now=timezone.now())
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, learners[0].email)
    response = page.goto(f"/capstone/peer/{taken.pk}/")
    assert response is not None and response.status == 410
    assert page.get_by_role("heading", level=1).inner_text() == "This assignment has expired"
    assert "went back to the queue" in page.get_by_test_id("peer-expired").inner_text()
    assert page.get_by_role("link", name=re.compile("^Back to peer assessment")).is_visible()
    # From the keyboard to the way on; the page it ends on (this one) is read by axe.
    page.get_by_role("button", name="Assess another plan").focus()
    assert page.evaluate("document.activeElement.textContent") == "Assess another plan"
    fits(page, width)
