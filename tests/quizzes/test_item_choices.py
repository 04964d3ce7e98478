"""The choices learners pick: the lesson's first answer keeps them in the review log, the item
analysis shares them out per choice and flags a distractor nobody picked."""

from __future__ import annotations

import pytest
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from quizzes import item_analysis as method
from quizzes.item_analysis import FirstAnswer, item_analysis
from quizzes.models import ReviewLog
from tests.quizzes.factories import course_with_items

HTMX = {"HTTP_HX_REQUEST": "true"}
KEYS = ("a", "b", "c", "d")
OPTIONS = {1: [("a", True), ("b", False), ("c", False), ("d", False)]}

answers = st.lists(
    st.tuples(
        st.integers(1, 50),
        st.integers(1, 4),
        st.one_of(st.none(), st.sets(st.sampled_from(KEYS), min_size=1, max_size=2)),
    ),
    max_size=200,
)


@settings(max_examples=200, deadline=None)
@given(answers, st.integers(1, 30))
def test_shares_count_each_learners_first_pick_and_flag_an_unpicked_distractor(
    rows: list[tuple[int, int, set[str] | None]], minimum: int
) -> None:
    firsts: dict[int, set[str] | None] = {}
    for learner, _rating, picked in rows:
        firsts.setdefault(learner, picked)
    fig = item_analysis(
        [FirstAnswer(lr, 1, r, None if p is None else tuple(sorted(p))) for lr, r, p in rows],
        item_ids=[1],
        choices=OPTIONS,
        min_responses=minimum,
    )[0]
    recorded = [p for p in firsts.values() if p is not None]
    assert fig.choice_responses == len(recorded)
    assert fig.choice_shares is not None
    assert [s.key for s in fig.choice_shares] == list(KEYS)
    for share in fig.choice_shares:
        chosen = sum(1 for p in recorded if share.key in p)
        assert share.chosen == chosen
        assert share.share == (chosen / len(recorded) if recorded else None)
    unpicked = any(not any(key in p for p in recorded) for key in ("b", "c", "d"))
    flagged = method.FLAG_DISTRACTOR_NEVER_CHOSEN in fig.flags
    assert flagged == (unpicked and len(recorded) >= minimum)


def test_an_item_without_choices_has_no_shares_and_no_distractor_flag() -> None:
    fig = item_analysis([FirstAnswer(k, 2, 3) for k in range(30)], item_ids=[2], choices=OPTIONS)
    assert fig[0].choice_shares is None and fig[0].choice_responses == 0
    assert method.FLAG_DISTRACTOR_NEVER_CHOSEN not in fig[0].flags


@pytest.mark.django_db
def test_the_lessons_first_answer_logs_the_choices_picked(client, learner) -> None:  # type: ignore[no-untyped-def]
    c = course_with_items(learner=learner)
    client.force_login(learner)
    page = client.post(
        reverse("quizzes:answer", args=[c.mc.pk]), {"choice": ["tflops", "hbm"]}, **HTMX
    )
    assert page.status_code == 200
    log = ReviewLog.objects.get(learner=learner, item=c.mc)
    assert log.choice_keys == ["hbm", "tflops"]
    assert log.rating == ReviewLog.Rating.AGAIN
    # A numeric answer has no choices to keep.
    client.post(reverse("quizzes:answer", args=[c.numeric.pk]), {"value": "11"}, **HTMX)
    assert ReviewLog.objects.get(learner=learner, item=c.numeric).choice_keys is None


@pytest.mark.django_db
def test_a_choice_the_item_does_not_have_is_refused_and_nothing_is_logged(client, learner) -> None:  # type: ignore[no-untyped-def]
    c = course_with_items(learner=learner)
    client.force_login(learner)
    for picked in (["hbm", "x" * 5000], ["<script>"]):
        page = client.post(reverse("quizzes:answer", args=[c.mc.pk]), {"choice": picked})
        assert page.status_code == 400
        assert "choice: pick from the item" in page.content.decode()
    assert not ReviewLog.objects.filter(item=c.mc).exists()
