"""The skills map in a real browser: the learner's weakest skill and its practice session at
desktop and phone widths; the instructor's item analysis and cohort map (axe-checked by the
`page` fixture on every page opened)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from courses.models import Course, Enrollment
from home.services.content_import import course_import
from quizzes.models import QuizItem
from quizzes.services.answers import ItemResponse, item_answer
from quizzes.services.item_analysis import item_analysis_refresh
from tests.conftest import login_in_browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
COURSE = Path(__file__).resolve().parents[2] / "content" / "gpus-tpus-ai-hardware"


def _answer(learner, key: str, *, right: bool) -> QuizItem:  # type: ignore[no-untyped-def]
    item = QuizItem.objects.prefetch_related("choices").get(key=key)
    keys = frozenset(c.key for c in item.choices.all() if c.is_correct == right)
    item_answer(
        learner=learner,
        item=item,
        response=ItemResponse(choice_keys=keys),
        now=timezone.now() - timedelta(days=3),
    )
    return item


@pytest.fixture
def course(learner) -> Course:  # type: ignore[no-untyped-def]
    course = course_import(folder=COURSE).course
    Enrollment.objects.create(course=course, user=learner, role=Enrollment.Role.LEARNER)
    _answer(learner, "mig-what-it-gives", right=False)
    _answer(learner, "seventy-b-on-eighty-gb", right=True)
    return course


@pytest.mark.parametrize("width", [1280, 375])
def test_the_weakest_skill_leads_to_a_practice_session(page, learner, course, width) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": width, "height": 900})
    login_in_browser(page, learner.email)
    page.get_by_role("link", name="Your skills").click()
    weakest = page.get_by_test_id("weakest-skill")
    expect(weakest).to_contain_text("Weakest: MIG")
    expect(page.get_by_test_id("skill-row")).to_have_count(course.skills.count())
    if width == 375:
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0

    # From the keyboard: the practice link, then a MIG item answered in place.
    weakest.get_by_test_id("practise-weakest").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Practise MIG")
    mig = [i for i in QuizItem.objects.filter(lesson__module__course=course) if "mig" in i.skills]
    expect(page.get_by_test_id("cy-item")).to_have_count(len(mig))
    item = QuizItem.objects.get(key="mig-which-gpus")
    block = page.locator(f"#item-{item.pk}")
    for choice in item.choices.filter(is_correct=True):
        block.get_by_label(choice.text).check()
    block.get_by_role("button", name="Check answer").click()
    expect(page.locator(f"#item-{item.pk} [data-testid=cy-feedback]")).to_be_visible()
    # A calculated MIG item offers numbers of its own to practise on.
    calculated = QuizItem.objects.get(key="users-on-a-mig-slice")
    expect(page.locator(f"#item-{calculated.pk} input[name=value]")).to_be_visible()
    if width == 375:
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
    assert not page.console_errors, page.console_errors


def test_the_instructor_reads_the_analysis_and_the_cohorts_map(page, instructor, course) -> None:  # type: ignore[no-untyped-def]
    Enrollment.objects.create(course=course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    item_analysis_refresh(course=course, now=timezone.now())
    login_in_browser(page, instructor.email)
    page.goto(f"/review/teaching/{course.slug}/")
    page.get_by_role("link", name="Item analysis").first.click()
    expect(page.get_by_test_id("item-analysis-computed")).to_contain_text("2 first answers")
    expect(page.get_by_test_id("item-analysis-row")).to_have_count(
        QuizItem.objects.filter(lesson__module__course=course).count()
    )
    # The MIG item was answered wrong, with every distractor picked: each choice shows its pick.
    mig = QuizItem.objects.get(key="mig-what-it-gives")
    row = page.locator(f'[data-testid=item-analysis-row][data-key="{mig.key}"]')
    for choice in mig.choices.all():
        share = row.locator(f'[data-testid=choice-share][data-key="{choice.key}"]')
        expect(share).to_contain_text(": 0 %" if choice.is_correct else ": 100 %")
    page.set_viewport_size({"width": 375, "height": 900})
    page.reload()
    expect(row.get_by_test_id("choice-share").first).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.get_by_role("link", name="The cohort's skills map").click()
    expect(page.get_by_test_id("cohort-skill-row")).to_have_count(course.skills.count())
