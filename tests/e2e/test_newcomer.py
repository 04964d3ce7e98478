"""What a newcomer tripped over (issue 44), in a real browser: a calculator update out of sight,
an invalid input's address bar, one user count per card, no sideways scroll at 320 px, unique
table regions, Space on a calculated review card, key hints on a touch screen, and a calculated
item's next review kept unseen by its lesson page (issue 38)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import User
from courses.models import Course, Enrollment
from home.services.content_import import course_import
from quizzes.calculated import problem_for
from quizzes.models import QuizItem, RecallSchedule
from quizzes.services.answers import lesson_problem
from quizzes.services.review import schedule_start
from tests import accessibility
from tests.conftest import login_in_browser
from tests.factories import EnrollmentFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COURSE = Path(__file__).resolve().parents[1] / "quizzes" / "calculated_course"
# Mistral 7B on an L40S at 32,768 tokens of context: 6 users fit of a target of 20.
LONG_CHAT = (
    "/planner/?estimate=serving&gpu=l40s&model=mistral-7b&weight_precision=bf16"
    "&kv_precision=bf16&context_tokens=32768&users=20"
)
CHAT = (
    "/planner/?estimate=serving&gpu=l40s&model=mistral-7b&weight_precision=bf16"
    "&kv_precision=bf16&overhead_gb=3&context_tokens=8192&users=20"
)


def enrolled(user: User, role: str = Enrollment.Role.LEARNER) -> Course:
    course = course_import(folder=COURSE).course
    EnrollmentFactory(course=course, user=user, role=role)
    return course


def in_view(page: Any, locator: Any) -> bool:
    box = locator.bounding_box()
    height = page.viewport_size["height"]
    return box is not None and box["y"] < height and box["y"] + box["height"] > 0


def test_an_update_out_of_sight_is_announced_and_shown_beside_the_field(page) -> None:  # type: ignore[no-untyped-def]
    """At 375 px the result sits above the form: a change to a lower field shows the new result's
    sentence under that field, announced in the status region, with a link up to the result."""
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(CHAT)
    field = page.get_by_label("Context tokens per user")
    field.scroll_into_view_if_needed()
    headline = page.locator("#calc-result .headline")
    assert not in_view(page, headline)
    field.fill("32768")
    nearby = page.get_by_test_id("calc-nearby")
    expect(nearby).to_contain_text("7 active users fit")
    assert in_view(page, nearby)
    assert page.locator("#field-context_tokens [data-testid=calc-nearby]").count() == 1
    expect(page.locator("#calc-announce")).to_contain_text("7 active users fit")
    assert page.locator("#calc-announce").get_attribute("role") == "status"
    nearby.get_by_role("link", name="See the result").click()
    expect(page.locator("#calc-result")).to_be_focused()
    assert in_view(page, headline)
    assert not page.console_errors, page.console_errors


def test_an_invalid_input_keeps_the_last_valid_link(page) -> None:  # type: ignore[no-untyped-def]
    """Neither a bad number nor a bad config.json puts the CSRF token or the posted inputs into
    the address bar or the history: it keeps the last valid, shareable link."""
    page.goto(CHAT)
    page.get_by_label("Context tokens per user").fill("16384")
    page.wait_for_url(re.compile(r"context_tokens=16384"))
    valid, history = page.url, page.evaluate("history.length")
    page.get_by_label("Context tokens per user").fill("-5")
    expect(page.get_by_test_id("error-context_tokens")).not_to_be_empty()
    page.get_by_label("Model config.json").fill('{"num_hidden_layers": 32,}')
    page.get_by_label("Model config.json").dispatch_event("change")
    expect(page.get_by_test_id("error-config")).to_contain_text("is not valid JSON at line 1")
    expect(page.get_by_test_id("error-config")).to_contain_text('after the key "num_hidden_layers"')
    page.wait_for_timeout(500)
    assert page.url == valid
    assert "csrfmiddlewaretoken" not in page.url and "config=" not in page.url
    assert page.evaluate("history.length") == history
    # The result still links to the last valid calculation; fixing the input moves on from it.
    page.get_by_label("Model config.json").fill("")
    page.get_by_label("Context tokens per user").fill("8192")
    page.wait_for_url(re.compile(r"context_tokens=8192"))
    assert "csrfmiddlewaretoken" not in page.url
    assert not page.console_errors, page.console_errors


def test_one_user_count_across_the_figures_and_the_chart(page) -> None:  # type: ignore[no-untyped-def]
    """When 6 of the 20 target users fit, the decode speed is for the 6 that fit, and the chart's
    point sits on its curve, not past its end."""
    page.goto(LONG_CHAT)
    assert page.get_by_test_id("max-users").inner_text() == "6"
    rate = page.get_by_test_id("decode-rate")
    expect(rate).to_contain_text("with 6 decoding together")
    expect(rate).to_contain_text("20 would not fit in memory")
    point = page.get_by_test_id("user-point")
    curve = page.get_by_test_id("predicted-curve").get_attribute("points") or ""
    last_x = max(float(p.split(",")[0]) for p in curve.split())
    assert float(point.get_attribute("cx") or 0) <= last_x
    expect(page.locator("#roofline-desc")).to_contain_text("Your batch of 6")
    assert not page.console_errors, page.console_errors


def test_no_page_state_scrolls_sideways_at_320_px(
    browser, live_server, learner, instructor
) -> None:  # type: ignore[no-untyped-def]
    """WCAG 1.4.10: the main pages and states of a learner and an instructor, every <details>
    opened, reflow into 320 px without a sideways scroll of the page."""
    course = enrolled(learner)
    EnrollmentFactory(course=course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    item = QuizItem.objects.get(key="free-memory")
    training = "estimate=training&model=llama-3.1-8b&method=lora&batch_size=4&seq_len=2048"
    batch = "estimate=batch&items=50000&window_hours=2&model=bge-large-en-v1.5&tokens_per_item=400"
    public = [
        "/",
        "/accessibility/",
        "/courses/",
        CHAT,
        LONG_CHAT,
        f"/planner/?{training}&checkpointing=true",
        f"/planner/?{batch}&gpu=t4",
        "/planner/?estimate=serving&gpu_memory_gb=-3",
        f"/planner/paths/?{training}&checkpointing=true&steps=1000",
        f"/planner/paths/?{batch}",
        "/planner/paths/?estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&users=20",
    ]
    as_learner = [
        "/dashboard/",
        item.lesson.get_absolute_url(),
        "/review/",
        "/review/stats/",
        "/planner/cards/",
        "/capstone/",
        "/accounts/preferences/",
    ]
    as_instructor = [
        "/dashboard/",
        "/courses/teaching/",
        f"/courses/teaching/{course.slug}/",
        f"/review/teaching/{course.slug}/",
        f"/review/teaching/{course.slug}/calculated/",
        f"/review/teaching/{course.slug}/settings/",
        f"/review/teaching/{course.slug}/parameters/",
        "/capstone/grading/",
    ]
    wide: list[str] = []
    for who, urls in ((None, public), (learner, as_learner), (instructor, as_instructor)):
        context = browser.new_context(
            base_url=live_server.url, viewport={"width": 320, "height": 700}
        )
        page = context.new_page()
        if who is not None:
            login_in_browser(page, who.email)
        for url in urls:
            response = page.goto(url)
            assert response is not None and response.ok, url
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
            scroll, client = page.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if scroll > client:
                wide.append(f"{url} ({who or 'visitor'}): {scroll - client} px")
        context.close()
    assert not wide, "Pages that scroll sideways at 320 px:\n" + "\n".join(wide)


def test_every_table_region_has_its_own_name(page, learner, instructor) -> None:  # type: ignore[no-untyped-def]
    """axe's landmark-unique: the course statistics' and the calculator's table regions (each a
    keyboard-reachable scrolling box) are told apart by name."""
    course = enrolled(learner)
    EnrollmentFactory(course=course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    page.goto(CHAT)
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.locator("[role=region]").count() >= 4
    assert unique_landmark_violations(page) == []
    login_in_browser(page, instructor.email)
    for url in (f"/review/teaching/{course.slug}/", f"/review/teaching/{course.slug}/calculated/"):
        page.goto(url)
        assert unique_landmark_violations(page) == [], url


def unique_landmark_violations(page: Any) -> list[str]:
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(accessibility.AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "() => axe.run(document, {runOnly: {type: 'rule', values: ['landmark-unique']}})"
    )
    return [" ".join(map(str, n["target"])) for v in result["violations"] for n in v["nodes"]]


def test_space_on_a_calculated_card_moves_to_its_answer_field(page, learner) -> None:  # type: ignore[no-untyped-def]
    """Space (or Enter) on a calculated card with no number typed goes to the answer field
    instead of submitting an empty answer; with a number, Enter checks it."""
    enrolled(learner)
    login_in_browser(page, learner.email)
    page.goto("/review/")
    field = page.get_by_test_id("calculated-value")
    expect(field).to_be_visible()
    page.locator("#card-prompt").click()
    page.keyboard.press(" ")
    expect(field).to_be_focused()
    assert page.get_by_test_id("worked-solution").count() == 0
    page.locator("#card-prompt").click()
    page.keyboard.press("Enter")
    expect(field).to_be_focused()
    assert page.get_by_test_id("worked-solution").count() == 0
    page.keyboard.type("12")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("calculated-verdict")).to_be_visible()
    assert not page.console_errors, page.console_errors


def test_a_touch_screen_shows_no_key_hints(browser, live_server, learner) -> None:  # type: ignore[no-untyped-def]
    """A phone (touch, no hover, coarse pointer) hides "Space or Enter" and the grade keys; a
    desktop keeps them."""
    enrolled(learner)
    hints: dict[str, int] = {}
    for name, options in (
        ("desktop", {"viewport": {"width": 1280, "height": 800}}),
        (
            "phone",
            {"viewport": {"width": 375, "height": 800}, "has_touch": True, "is_mobile": True},
        ),
    ):
        context = browser.new_context(base_url=live_server.url, **options)
        page = context.new_page()
        login_in_browser(page, learner.email)
        page.goto("/review/")
        page.get_by_test_id("calculated-value").fill("1")
        page.get_by_test_id("reveal").click()
        expect(page.get_by_test_id("grade-3")).to_be_visible()
        hints[name] = page.locator(".key-hint:visible").count()
        assert page.get_by_text("Keys: Space or Enter").is_visible() is (name == "desktop")
        context.close()
    assert hints["desktop"] >= 5 and hints["phone"] == 0, hints


@pytest.mark.parametrize("width", [1280, 375])
def test_the_lesson_never_shows_the_next_reviews_numbers(page, learner, width: int) -> None:  # type: ignore[no-untyped-def]
    """After the first answer, the lesson practises on other numbers than the next review's, and
    checking the review's answer there shows the practice problem's worked answer instead."""
    enrolled(learner)
    item = QuizItem.objects.get(key="kv-bytes")
    first = problem_for(item, learner_id=learner.pk, review=0)
    login_in_browser(page, learner.email)
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(item.lesson.get_absolute_url())
    block = page.locator(f"#item-{item.pk}")
    block.get_by_label(re.compile("Your answer")).fill(f"{first.solution.answer:g}")
    block.get_by_role("button", name="Check answer").click()
    expect(block.get_by_test_id("calculated-verdict")).to_contain_text("Within tolerance.")
    assert RecallSchedule.objects.get(item=item).reps == 1
    review = problem_for(item, learner_id=learner.pk, review=1)

    page.reload()
    practice = block.get_by_test_id("cy-prompt").inner_text()
    assert " ".join(practice.split()) != " ".join(review.prompt.split())
    expect(block).to_contain_text("practice numbers")
    block.get_by_label(re.compile("Your answer")).fill(f"{review.solution.answer:g}")
    block.get_by_role("button", name="Check answer").click()
    answer = block.get_by_test_id("calculated-answer")
    expect(answer).to_be_visible()
    shown = lesson_problem(learner_id=learner.pk, item=item, reps=1)
    assert shown is not None and shown.values != review.values
    assert answer.inner_text().split()[0] == shown.solution.answer_text
    expect(block).to_contain_text("Already in your reviews")
    assert RecallSchedule.objects.get(item=item).reps == 1
    assert not page.console_errors, page.console_errors


def test_the_calculated_statistics_read_at_375_px(page, learner, instructor) -> None:  # type: ignore[no-untyped-def]
    """At 375 px every column of the calculated-statistics table is on screen (each row stacks,
    its cells named), the exercise in words and the error as a percentage."""
    course = enrolled(learner)
    EnrollmentFactory(course=course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    item = QuizItem.objects.get(key="kv-bytes")
    schedule_start(
        learner=learner, item=item, card_token=uuid.uuid4(), rating=1,
        now=timezone.now(), answer_value=65_536, expected_value=131_072,
    )  # fmt: skip
    login_in_browser(page, instructor.email)
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"/review/teaching/{course.slug}/calculated/")
    row = page.get_by_test_id("calculated-row").filter(has_text="KV cache bytes per token")
    cells = row.locator("td")
    assert cells.count() == 5
    for i in range(cells.count()):
        box = cells.nth(i).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375, i
    expect(row.get_by_test_id("median-error")).to_have_text("50 %")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
