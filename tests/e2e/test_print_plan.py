"""A submitted capstone plan prints as the source asks: one page (A4 and Letter) holding the filled
worksheet, the automatic check and the attached workload cards, without the site's navigation,
flash messages or back link; a 'Print / save as PDF' button opens the browser's print dialog."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from planner.capstone.services import worksheet_autosave, worksheet_submit
from planner.capstone.worksheet_fields import WORKSHEET_TEXT_FIELDS
from planner.models import CapstoneWorksheet, WorkloadCard
from tests.conftest import ARTIFACTS, login_in_browser
from tests.planner.factories import WorkloadCardFactory, course_taught_by, worksheet_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A realistic answer for every free-text field: one or two sentences, as a learner writes them.
ANSWER = (
    "Measured on the staging node with the lesson corpus: the p95 holds under two seconds at ten "
    "active users, and we re-run this each release before widening access."
)


def _filled_worksheet(learner, course) -> None:  # type: ignore[no-untyped-def]
    """Every field answered and three workload cards attached, ready to submit."""
    fields = {
        name: ANSWER[: field.max_length or None]
        for name in WORKSHEET_TEXT_FIELDS
        if not (field := CapstoneWorksheet._meta.get_field(name)).choices
        and (field.max_length or 200) >= 200
    }
    worksheet = worksheet_for(learner, course, **fields)
    cards = [
        WorkloadCardFactory(owner=learner, name=f"Chat replica {n}", kind=kind)
        for n, kind in enumerate(WorkloadCard.Kind.values)
    ]
    worksheet_autosave(worksheet=worksheet, data={}, workload_cards=cards)


def _pdf_pages(pdf: bytes) -> int:
    """Page objects in a PDF (the /Pages tree node does not count)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


@pytest.mark.parametrize("width", [1280, 375])
def test_submission_prints_on_one_page_without_site_chrome(page, learner, width: int) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(title="GPUs and TPUs")
    _filled_worksheet(learner, course)
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, learner.email)
    page.goto(f"/capstone/courses/{course.slug}/worksheet/")
    page.get_by_role("button", name="Submit plan").click()
    flash = page.get_by_text("Version 1 submitted.")
    flash.wait_for()
    assert page.get_by_test_id("automatic-check").is_visible()
    assert page.get_by_text("Chat replica 2").is_visible()

    # The button prints through a script file (the CSP forbids inline handlers).
    page.evaluate("window.print = () => { window.printed = true; }")
    button = page.get_by_role("button", name="Print / save as PDF")
    button.focus()
    page.keyboard.press("Enter")
    assert page.evaluate("window.printed") is True
    assert page.console_errors == []

    page.emulate_media(media="print")
    assert not page.get_by_role("navigation", name="Main").is_visible()
    assert not flash.is_visible()
    assert not page.get_by_role("link", name=re.compile("Your capstone plans")).is_visible()
    assert not button.is_visible()
    assert page.get_by_test_id("automatic-check").is_visible()
    assert page.get_by_text("Chat replica 2").is_visible()
    assert page.get_by_text(ANSWER[:60]).first.is_visible()

    for paper in ("A4", "Letter"):
        pdf = page.pdf(format=paper, print_background=True)
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / f"plan-{paper}-{width}.pdf").write_bytes(pdf)
        assert _pdf_pages(pdf) == 1, f"{paper}: {_pdf_pages(pdf)} pages"


def test_print_button_only_where_a_script_runs(browser, live_server, learner) -> None:  # type: ignore[no-untyped-def]
    """Without scripts the button could not print, so it is not shown (the browser's own print
    still uses the print stylesheet)."""
    course = course_taught_by(title="GPUs and TPUs")
    _filled_worksheet(learner, course)
    submission = worksheet_submit(
        worksheet=CapstoneWorksheet.objects.get(learner=learner), now=timezone.now()
    )
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        page = context.new_page()
        login_in_browser(page, learner.email)
        page.goto(f"/capstone/submissions/{submission.pk}/")
        assert page.get_by_test_id("automatic-check").is_visible()
        assert not page.get_by_role("button", name="Print / save as PDF").is_visible()
    finally:
        context.close()
