"""Item analysis: facility, Kelley's discrimination and the point-biserial over first answers,
the flags as defined, and on the demo cohort the command, the stored row and the page agree
with an independent count of first review logs."""

from __future__ import annotations

import json
from dataclasses import replace
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from courses.models import Course, Enrollment
from home.services.content_import import course_import
from home.services.demo_cohort import demo_cohort_seed
from quizzes import item_analysis as method
from quizzes.item_analysis import FirstAnswer, item_analysis
from quizzes.models import ItemAnalysis, QuizItem, ReviewLog
from quizzes.tasks import item_analysis_nightly

COURSE = Path(__file__).resolve().parents[2] / "content" / "gpus-tpus-ai-hardware"

cohorts = st.lists(
    st.tuples(st.integers(1, 40), st.integers(1, 6), st.integers(1, 4)), min_size=0, max_size=300
)


@settings(max_examples=200, deadline=None)
@given(cohorts)
def test_figures_stay_in_their_ranges_on_any_cohort(rows: list[tuple[int, int, int]]) -> None:
    answers = [FirstAnswer(learner_id=lr, item_id=it, rating=r) for lr, it, r in rows]
    figures = item_analysis(answers, item_ids=range(1, 7))
    firsts: dict[tuple[int, int], int] = {}
    for lr, it, r in rows:
        firsts.setdefault((lr, it), r)
    for fig in figures:
        mine = [r for (_lr, it), r in firsts.items() if it == fig.item_id]
        assert fig.responses == len(mine)
        if mine:
            assert fig.facility == sum(1 for r in mine if r > 1) / len(mine)
        else:
            assert fig.facility is None
        for value in (fig.discrimination, fig.point_biserial):
            assert value is None or -1.0 <= value <= 1.0
        assert (method.FLAG_FEW_RESPONSES in fig.flags) == (fig.responses < method.MIN_RESPONSES)


@settings(max_examples=100, deadline=None)
@given(cohorts)
def test_reading_one_learner_at_a_time_gives_the_same_figures(
    rows: list[tuple[int, int, int]],
) -> None:
    answers = [FirstAnswer(learner_id=lr, item_id=it, rating=r) for lr, it, r in rows]
    by_learner = sorted(answers, key=lambda a: a.learner_id)  # stable: first answers kept
    grouped = item_analysis(by_learner, item_ids=range(1, 7), grouped=True)
    for one, other in zip(grouped, item_analysis(answers, item_ids=range(1, 7)), strict=True):
        # The sums run in another order: the correlation may differ in its last bits.
        assert one.point_biserial == pytest.approx(other.point_biserial, abs=1e-12)
        assert replace(one, point_biserial=None) == replace(other, point_biserial=None)


def test_a_learner_split_across_the_rows_is_refused_when_read_grouped() -> None:
    rows = [FirstAnswer(1, 1, 3), FirstAnswer(2, 1, 1), FirstAnswer(1, 2, 3)]
    with pytest.raises(ValueError, match="learner 1"):
        item_analysis(rows, item_ids=[1, 2], grouped=True)


def _cohort(n: int, right_for: object) -> list[FirstAnswer]:
    """n learners, learner k right on the 4 anchor items iff k >= n/2 (strong half), and on
    item 9 as `right_for(k)` says."""
    rows = []
    for k in range(n):
        for item in range(1, 5):
            rows.append(FirstAnswer(k, item, 3 if k >= n // 2 else 1))
        rows.append(FirstAnswer(k, 9, 3 if right_for(k) else 1))  # type: ignore[operator]
    return rows


def _figures_of_item_9(rows: list[FirstAnswer]) -> method.ItemFigures:
    return item_analysis(rows, item_ids=[1, 2, 3, 4, 9])[-1]


def test_an_item_the_strong_learners_miss_is_flagged_negative() -> None:
    fig = _figures_of_item_9(_cohort(40, lambda k: k < 20))
    assert fig.discrimination == -1.0
    assert fig.point_biserial is not None and fig.point_biserial < 0
    assert method.FLAG_NEGATIVE_DISCRIMINATION in fig.flags


def test_an_item_the_strong_learners_get_right_discriminates_fully() -> None:
    fig = _figures_of_item_9(_cohort(40, lambda k: k >= 20))
    assert fig.discrimination == 1.0
    assert fig.point_biserial == pytest.approx(1.0)
    assert fig.flags == ()


def test_too_easy_too_hard_and_few_responses_follow_their_thresholds() -> None:
    easy = _figures_of_item_9(_cohort(40, lambda k: k != 0))  # 39 of 40 right: 0.975
    assert method.FLAG_TOO_EASY in easy.flags
    hard = _figures_of_item_9(_cohort(40, lambda k: k < 4))  # 4 of 40: 0.1
    assert method.FLAG_TOO_HARD in hard.flags
    edge = _figures_of_item_9(_cohort(40, lambda k: k < 8))  # 8 of 40: exactly 0.2, not below
    assert method.FLAG_TOO_HARD not in edge.flags
    few = _figures_of_item_9(_cohort(19, lambda k: k >= 9))
    assert method.FLAG_FEW_RESPONSES in few.flags
    assert method.FLAG_FEW_RESPONSES not in _figures_of_item_9(_cohort(20, bool)).flags


def _independent_first_picks(item: QuizItem) -> list[list[str]]:
    """Each learner's first log of the item's choices picked, walking every log in time order."""
    first: dict[int, list[str] | None] = {}
    for log in ReviewLog.objects.filter(item=item).order_by("reviewed_at", "id"):
        first.setdefault(log.learner_id, log.choice_keys)
    return [picked for picked in first.values() if picked is not None]


def _assert_choice_shares(row: dict, item: QuizItem) -> bool:  # type: ignore[type-arg]
    """The row's shares against an independent count; whether a distractor went unpicked."""
    if item.kind != QuizItem.Kind.MULTIPLE_CHOICE:
        assert row["choice_shares"] is None
        return False
    picks = _independent_first_picks(item)
    assert row["choice_responses"] == len(picks) == row["responses"]
    keyed = {c.key: c.is_correct for c in item.choices.all()}
    assert [s["key"] for s in row["choice_shares"]] == list(keyed)
    unpicked = False
    for share in row["choice_shares"]:
        chosen = sum(1 for p in picks if share["key"] in p)
        assert share["chosen"] == chosen and share["share"] == chosen / len(picks)
        assert share["correct"] == keyed[share["key"]]
        unpicked |= not share["correct"] and chosen == 0
    never = unpicked and len(picks) >= method.MIN_RESPONSES
    assert (method.FLAG_DISTRACTOR_NEVER_CHOSEN in row["flags"]) == never
    return never


def _independent_first_ratings(item: QuizItem) -> list[int]:
    """Each learner's first log of the item, found by walking every log in time order."""
    first: dict[int, int] = {}
    for log in ReviewLog.objects.filter(item=item).order_by("reviewed_at", "id"):
        first.setdefault(log.learner_id, log.rating)
    return list(first.values())


@pytest.fixture
def demo_course(db) -> Course:  # type: ignore[no-untyped-def]
    course = course_import(folder=COURSE).course
    demo_cohort_seed(now=timezone.now())
    return course


def test_on_the_demo_cohort_the_json_matches_an_independent_count(demo_course, instructor) -> None:  # type: ignore[no-untyped-def]
    out = StringIO()
    call_command("item_analysis", demo_course.slug, "--json", stdout=out)
    report = json.loads(out.getvalue())
    items = {i.key: i for i in QuizItem.objects.filter(lesson__module__course=demo_course)}
    assert {row["key"] for row in report["items"]} == set(items)
    flagged = set()
    for row in report["items"]:
        ratings = _independent_first_ratings(items[row["key"]])
        assert row["responses"] == len(ratings) > 0
        assert row["facility"] == sum(1 for r in ratings if r > 1) / len(ratings)
        for key in ("discrimination", "point_biserial"):
            assert row[key] is None or -1.0 <= row[key] <= 1.0
        assert (method.FLAG_TOO_EASY in row["flags"]) == (row["facility"] > 0.9)
        assert (method.FLAG_TOO_HARD in row["flags"]) == (row["facility"] < 0.2)
        negative = row["discrimination"] is not None and row["discrimination"] < 0
        assert (method.FLAG_NEGATIVE_DISCRIMINATION in row["flags"]) == negative
        assert row["skills"], row["key"]
        _assert_choice_shares(row, items[row["key"]])
        flagged.update(row["flags"])
    # The cohort simulates one miskeyed item and one implausible distractor: both flags show.
    assert method.FLAG_NEGATIVE_DISCRIMINATION in flagged
    assert method.FLAG_DISTRACTOR_NEVER_CHOSEN in flagged

    # The page shows the stored analysis, the same figures.
    Enrollment.objects.create(course=demo_course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    client = Client()
    client.force_login(instructor)
    page = client.get(reverse("quizzes:course_item_analysis", args=[demo_course.slug]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "item-analysis-computed" in html
    stored = ItemAnalysis.objects.get(course=demo_course)
    assert stored.report == report
    for row in report["items"]:
        assert f'data-key="{row["key"]}" data-facility="{row["facility"]}' in html
        for share in row["choice_shares"] or ():
            assert f'data-key="{share["key"]}" data-chosen="{share["chosen"]}"' in html


def test_the_nightly_task_stores_every_courses_analysis(  # type: ignore[no-untyped-def]
    demo_course, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        assert item_analysis_nightly() == Course.objects.count()
    stored = ItemAnalysis.objects.get(course=demo_course)
    assert stored.learners >= 50 and stored.responses > 1000


def test_the_page_says_how_to_compute_it_before_the_first_run(instructor) -> None:  # type: ignore[no-untyped-def]
    course = course_import(folder=COURSE).course
    Enrollment.objects.create(course=course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    client = Client()
    client.force_login(instructor)
    html = client.get(reverse("quizzes:course_item_analysis", args=[course.slug])).content.decode()
    assert "item-analysis-empty" in html and "manage.py item_analysis" in html


@pytest.mark.parametrize("slug", ["no such", "x" * 51, "missing-course"])
@pytest.mark.django_db
def test_the_command_refuses_a_bad_course_in_one_line(slug: str) -> None:
    with pytest.raises(CommandError) as caught:
        call_command("item_analysis", slug, stdout=StringIO())
    assert caught.value.returncode == 2
    assert str(caught.value).startswith("course:") and "\n" not in str(caught.value)
