"""The capstone in a real browser: worksheet → submit → claim → grade → release → learner reads it."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from planner.models import CapstoneSubmission, CapstoneWorksheet, Grade
from tests.conftest import login_in_browser
from tests.factories import EnrollmentFactory
from tests.planner.factories import course_taught_by

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

XSS = (
    '<script>window.pwned = 1; alert("x")</script><img src=x onerror="window.pwned = 2; alert(2)">'
)


def fill_worksheet(page, feature: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_label("Feature", exact=True).fill(feature)
    page.get_by_label("User problem").fill("Learners wait too long for answers about a lesson.")
    page.get_by_label("Precision", exact=True).fill("int8")
    page.get_by_label("GPU memory (GB)").fill("24")
    page.get_by_label("Model weights (GB)").fill("14")
    page.get_by_label("Runtime overhead (GB)").fill("3")
    page.get_by_label("KV cache per active user (GB)").fill("0.6")
    page.get_by_label("Concurrent users (peak)").fill("20")
    page.get_by_label("Recommendation", exact=True).select_option("gpu")


def test_learner_submits_instructor_grades_learner_reads_grade(
    page, browser, live_server, learner, instructor
) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor, title="GPUs and TPUs")
    EnrollmentFactory(course=course, user=learner)

    # The learner fills the worksheet; the draft autosaves.
    login_in_browser(page, learner.email)
    page.goto("/capstone/")
    page.get_by_role("link", name="Start the worksheet").click()
    fill_worksheet(page, "Live lesson chat")
    page.get_by_text(re.compile(r"Saved at \d\d:\d\d:\d\d")).wait_for()
    assert (
        page.get_by_test_id("calculator-summary").inner_text().endswith("room for 11 active users.")
    )
    assert CapstoneWorksheet.objects.get(learner=learner).feature == "Live lesson chat"
    page.get_by_role("button", name="Save draft").click()
    page.get_by_text("Draft saved.").wait_for()

    page.get_by_role("button", name="Submit plan").click()
    page.get_by_text("Version 1 submitted.").wait_for()
    check = page.get_by_test_id("automatic-check")
    assert "20 users need" in check.inner_text()  # the plan cannot hold its stated concurrency
    assert page.get_by_test_id("grade-pending").is_visible()
    submission = CapstoneSubmission.objects.get(learner=learner)

    # The instructor claims it and grades each criterion with the keyboard and the mouse.
    context = browser.new_context(base_url=live_server.url)
    grader = context.new_page()
    grader_errors: list[str] = []
    grader.on("console", lambda m: grader_errors.append(m.text) if m.type == "error" else None)
    login_in_browser(grader, instructor.email)
    grader.goto("/capstone/grading/")
    grader.get_by_role("link", name=re.compile("Lee Learner, version 1")).click()
    assert "20 users need" in grader.get_by_test_id("automatic-check").inner_text()
    grader.get_by_test_id("claim-box").get_by_role("button", name="Claim to grade").click()
    grader.get_by_text("Claimed: it is yours to grade").wait_for()

    memory = grader.get_by_role("group", name="Memory and KV estimate")
    memory.get_by_role("radio").first.focus()
    grader.keyboard.press("ArrowDown")  # Missing → Partial
    grader.keyboard.press("ArrowDown")  # Partial → Strong
    assert memory.get_by_label(re.compile("^Strong")).is_checked()
    grader.get_by_label("Comment on Memory and KV estimate").fill(
        "KV per user is right; 20 users do not fit."
    )
    operability = grader.get_by_role("group", name="Operability")
    operability.get_by_label(re.compile("^Partial")).check()
    grader.get_by_label("Comment on Operability").fill("Name the on-call owner.")
    assert grader.get_by_test_id("live-total").inner_text() == "6"
    grader.get_by_label("Overall feedback").fill("Cap concurrency at 11 or add memory.")
    grader.get_by_role("button", name="Save draft").click()
    grader.get_by_text("Draft saved.").wait_for()
    assert Grade.objects.get(submission=submission).status == Grade.Status.DRAFT

    # Not released yet: the learner sees no grade.
    page.reload()
    assert page.get_by_test_id("grade-pending").is_visible()

    grader.screenshot(path="test-artifacts/capstone-grading-page.png", full_page=True)
    grader.get_by_role("button", name="Release grade").click()
    grader.get_by_text("Grade released").wait_for()
    assert not grader_errors, grader_errors
    context.close()

    # The learner reads the grade and feedback; the release email is in the outbox.
    page.reload()
    grade = page.get_by_test_id("released-grade")
    text = grade.inner_text()
    assert "Your grade: 6 / 8" in text
    assert "KV per user is right; 20 users do not fit." in text
    assert "Name the on-call owner." in text
    assert (
        "Cap concurrency at 11 or add memory."
        in page.get_by_test_id("overall-feedback").inner_text()
    )
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == [learner.email]
    assert f"/capstone/submissions/{submission.pk}/" in mail.outbox[0].body
    assert not page.console_errors, page.console_errors

    # Readable at 375 px: neither the grade page nor the worksheet scrolls sideways.
    page.set_viewport_size({"width": 375, "height": 800})
    for url in (
        f"/capstone/submissions/{submission.pk}/",
        f"/capstone/courses/{course.slug}/worksheet/",
    ):
        page.goto(url)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, url


def test_script_payload_in_a_plan_never_runs(
    page, browser, live_server, learner, instructor
) -> None:  # type: ignore[no-untyped-def]
    """A <script> and an onerror payload set no global and open no dialog, for learner or grader."""
    course = course_taught_by(instructor)
    EnrollmentFactory(course=course, user=learner)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login_in_browser(page, learner.email)
    page.goto(f"/capstone/courses/{course.slug}/worksheet/")
    fill_worksheet(page, XSS)
    page.get_by_label("User problem").fill(XSS)
    page.get_by_role("button", name="Submit plan").click()
    page.get_by_text("Version 1 submitted.").wait_for()
    assert page.locator("[data-field=feature]").inner_text() == XSS
    assert page.evaluate("typeof window.pwned") == "undefined"
    page.goto(f"/capstone/courses/{course.slug}/worksheet/")
    assert page.get_by_label("Feature", exact=True).input_value() == XSS
    assert page.evaluate("typeof window.pwned") == "undefined"

    submission = CapstoneSubmission.objects.get(learner=learner)
    context = browser.new_context(base_url=live_server.url)
    grader = context.new_page()
    grader.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login_in_browser(grader, instructor.email)
    grader.goto(f"/capstone/grading/{submission.pk}/")
    assert grader.locator("[data-field=user_problem]").inner_text() == XSS
    assert grader.evaluate("typeof window.pwned") == "undefined"
    grader.goto("/capstone/grading/")
    assert grader.evaluate("typeof window.pwned") == "undefined"
    context.close()
    assert dialogs == []


def test_a_recommendation_the_attached_comparison_rejects_is_flagged(
    page, live_server, learner, instructor
) -> None:  # type: ignore[no-untyped-def]
    """The learner compares the paths for the chat card, pastes the comparison's link into the
    worksheet and recommends a CPU anyway: the check on the submitted version says why not."""
    course = course_taught_by(instructor, title="GPUs and TPUs")
    EnrollmentFactory(course=course, user=learner)
    login_in_browser(page, learner.email)
    page.goto(
        "/planner/paths/?estimate=serving&model=llama-3.1-8b&context_tokens=8192&users=20"
        "&ttft_target_ms=2000&requests_per_day=1000"
    )
    link = page.get_by_test_id("share-link").get_attribute("href")
    assert link and link.startswith("/planner/paths/?")
    page.goto(f"/capstone/courses/{course.slug}/worksheet/")
    fill_worksheet(page, "Live lesson chat")
    page.get_by_label("Recommendation", exact=True).select_option("cpu")
    page.get_by_label("Path comparison (its link)").fill(live_server.url + link)
    page.get_by_role("button", name="Save draft").click()
    page.get_by_text("Draft saved.").wait_for()
    attached = page.get_by_test_id("attached-comparison")
    assert "recommends Managed model API" in attached.inner_text()
    page.get_by_role("button", name="Submit plan").click()
    page.get_by_text("Version 1 submitted.").wait_for()
    check = page.get_by_test_id("automatic-check")
    flagged = check.locator('[data-code="recommendation_rejected"]')
    assert "recommends a CPU, but the attached comparison rejects every CPU option" in (
        flagged.inner_text()
    )
    assert "misses on compute" in flagged.inner_text()
    assert not page.console_errors, page.console_errors
