"""The review session, lesson answers and statistics pages through the Django test client."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from quizzes.models import RecallSchedule, ReviewLog, ReviewUndo
from quizzes.selectors.queue import LEARN_AHEAD, local_day_of
from quizzes.services.review import schedule_start
from tests.factories import ChoiceFactory, EnrollmentFactory, QuizItemFactory, UserFactory
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HTMX = {"HTTP_HX_REQUEST": "true"}


def count_of(html: str) -> int:
    match = re.search(r'data-testid="due-count">(\d+)<', html)
    assert match, html
    return int(match.group(1))


def test_session_requires_login(client):
    """Anonymous visitors are sent to the login page."""
    response = client.get(reverse("quizzes:session"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_empty_session_says_what_to_do(client, learner):
    """With no cards at all the page says reviews start in the lessons and points to them."""
    client.force_login(learner)
    html = client.get(reverse("quizzes:session")).content.decode()
    assert "No cards yet" in html and "go to a lesson and answer its check-yourself items" in html
    assert count_of(html) == 0
    assert 'data-testid="undo"' not in html


def test_empty_session_says_when_the_next_card_is_due(client, learner):
    """All caught up: the page says nothing is due and when the next card is (a review card:
    the start of its local due day), and reloads itself then."""
    c = course_with_items(learner=learner, daily_new_limit=0, learning_steps_minutes=[])
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    assert schedule.state == RecallSchedule.State.REVIEW
    due = schedule.due
    day_start = local_day_of(learner=learner, moment=due)
    client.force_login(learner)
    with time_machine.travel(day_start - timedelta(hours=3), tick=False):
        html = client.get(reverse("quizzes:session")).content.decode()
    assert "All caught up" in html and "Nothing is due right now" in html
    assert "Your next card is due in 3\xa0hours" in html
    assert 'data-hx-trigger="load delay:10800s"' in html
    with time_machine.travel(day_start + timedelta(minutes=1), tick=False):
        html = client.get(reverse("quizzes:session")).content.decode()
    assert count_of(html) == 1 and 'data-testid="review-card"' in html


def test_learning_step_due_within_twenty_minutes_is_shown_now(client, learner):
    """A learning card due in five minutes is shown (learn-ahead), not "all caught up"; one due
    in 25 minutes is announced as due in 5 minutes, when it enters the window."""
    c = course_with_items(learner=learner, daily_new_limit=0, learning_steps_minutes=[1, 30])
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    assert schedule.state == RecallSchedule.State.LEARNING
    client.force_login(learner)
    with time_machine.travel(schedule.due - timedelta(minutes=5), tick=False):
        html = client.get(reverse("quizzes:session")).content.decode()
    assert count_of(html) == 1 and 'data-testid="review-card"' in html
    with time_machine.travel(schedule.due - timedelta(minutes=25), tick=False):
        html = client.get(reverse("quizzes:session")).content.decode()
    assert "All caught up" in html and "Your next card is due in 5\xa0minutes" in html


def test_empty_state_never_says_zero_minutes(client, learner):
    """Under a minute before the next card: "in under a minute", not "in 0 minutes", and the
    page reloads itself when it falls due."""
    c = course_with_items(learner=learner, daily_new_limit=0, learning_steps_minutes=[10])
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=1, now=T0)
    schedule = RecallSchedule.objects.get()
    client.force_login(learner)
    moment = schedule.due - LEARN_AHEAD - timedelta(seconds=30)
    with time_machine.travel(moment, tick=False):
        html = client.get(reverse("quizzes:session")).content.decode()
    assert "0\xa0minutes" not in html
    assert "Your next card is due in under a minute" in html
    assert 'data-hx-trigger="load delay:30s"' in html


def test_empty_session_says_the_daily_limit_is_reached(client, learner):
    """Cards still due beyond the course's daily review cap: the page names the limit, not
    "nothing due"."""
    c = course_with_items(
        learner=learner, daily_new_limit=0, daily_review_limit=1, learning_steps_minutes=[]
    )
    with time_machine.travel(T0, tick=False):
        for item in (c.mc, c.recall):
            schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=3, now=T0)
    client.force_login(learner)
    with time_machine.travel(T0 + timedelta(days=60), tick=False):
        first = RecallSchedule.objects.order_by("due", "id").first()
        assert first is not None
        html = client.post(
            reverse("quizzes:grade"),
            {"schedule_id": first.pk, "card_token": str(first.card_token), "rating": 3},
            **HTMX,
        ).content.decode()
    assert count_of(html) == 0
    assert "Today's limit reached" in html and "Nothing is due right now" not in html
    assert "today's 1 review," in html


def test_review_flow_reveal_grade_undo(client, learner):
    """Show a due card, reveal it with interval previews, grade it (count falls), undo it."""
    c = course_with_items(learner=learner, daily_new_limit=0)
    client.force_login(learner)
    with time_machine.travel(T0, tick=False) as traveller:
        for item in (c.mc, c.recall):
            schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=3, now=T0)
        traveller.move_to(T0 + timedelta(days=30))
        html = client.get(reverse("quizzes:session")).content.decode()
        assert count_of(html) == 2
        assert 'data-testid="undo"' not in html  # nothing graded in this session yet
        first = RecallSchedule.objects.order_by("due", "id").first()
        assert first is not None
        assert str(first.card_token) in html and first.item.prompt in html
        # The factory's multiple-choice item has two correct choices: the card says so.
        assert first.item == c.mc and "More than one answer is correct" in html
        reveal = client.get(
            reverse("quizzes:session"),
            {"reveal": 1, "schedule": first.pk, "token": str(first.card_token), "shown_at": 1},
            **HTMX,
        )
        body = reveal.content.decode()
        assert "<html" not in body  # a partial
        for label in ("Again", "Hard", "Good", "Easy"):
            assert label in body
        assert re.search(r"grade-interval\">\d+(\.\d)? (min|h|d|mo|y)<", body)
        graded = client.post(
            reverse("quizzes:grade"),
            {"schedule_id": first.pk, "card_token": str(first.card_token), "rating": 3},
            **HTMX,
        )
        assert graded.status_code == 200
        assert count_of(graded.content.decode()) == 1
        assert 'data-testid="undo"' in graded.content.decode()
        # The same grade again (double click) changes nothing.
        again = client.post(
            reverse("quizzes:grade"),
            {"schedule_id": first.pk, "card_token": str(first.card_token), "rating": 3},
            **HTMX,
        )
        assert count_of(again.content.decode()) == 1
        assert ReviewLog.objects.filter(schedule=first).count() == 2
        undone = client.post(reverse("quizzes:undo"), **HTMX).content.decode()
        assert count_of(undone) == 2
        assert ReviewUndo.objects.count() == 1
        # The notice names the card in whole words; with the grade undone, no undo is offered.
        prompt_words = first.item.prompt.split()
        assert f"Undid your grade of “{' '.join(prompt_words[:12])}" in undone
        assert 'data-testid="undo"' not in undone


def test_new_items_come_after_due_and_are_graded_in_session(client, learner):
    """A never-answered item is served as new after due cards, and grading it schedules it."""
    c = course_with_items(learner=learner, daily_new_limit=5)
    client.force_login(learner)
    html = client.get(reverse("quizzes:session")).content.decode()
    assert count_of(html) == 3
    assert c.mc.prompt in html and 'name="item"' in html
    token = re.search(r'name="token" value="([0-9a-f-]{36})"', html).group(1)
    response = client.post(
        reverse("quizzes:grade"),
        {"item_id": c.mc.pk, "card_token": token, "rating": 1},
        **HTMX,
    )
    assert count_of(response.content.decode()) == 2
    log = ReviewLog.objects.get()
    assert log.source == ReviewLog.Source.REVIEW and log.item == c.mc
    # A retried first grade (same token) is answered, not a 404, and writes nothing more.
    retry = client.post(
        reverse("quizzes:grade"),
        {"item_id": c.mc.pk, "card_token": token, "rating": 1},
        **HTMX,
    )
    assert retry.status_code == 200 and count_of(retry.content.decode()) == 2
    assert ReviewLog.objects.count() == 1


def test_undo_is_bounded_to_todays_grades_most_recent_first(client, learner):
    """Undo takes back today's session grades, latest first; yesterday's stay (the page says
    none is left)."""
    c = course_with_items(learner=learner, daily_new_limit=0)
    for item in (c.mc, c.recall):
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=3, now=T0)
    client.force_login(learner)
    first, second = RecallSchedule.objects.order_by("id")
    yesterday = T0 + timedelta(days=20)
    today = yesterday + timedelta(days=1)

    def grade(schedule: RecallSchedule, at: datetime) -> None:
        schedule.refresh_from_db()
        with time_machine.travel(at, tick=False):
            client.post(
                reverse("quizzes:grade"),
                {"schedule_id": schedule.pk, "card_token": str(schedule.card_token), "rating": 3},
                **HTMX,
            )

    grade(first, yesterday)
    grade(second, today)
    grade(first, today + timedelta(minutes=1))
    undone = []
    with time_machine.travel(today + timedelta(minutes=5), tick=False):
        for _ in range(3):
            html = client.post(reverse("quizzes:undo"), **HTMX).content.decode()
            undone.append(html)
    assert "Undid your grade of “Which are memory?”" in undone[0]
    assert f"Undid your grade of “{c.recall.prompt}”" in undone[1]
    assert "There is no grade of today left to undo." in undone[2]
    assert ReviewUndo.objects.count() == 2
    assert not ReviewUndo.objects.filter(log__reviewed_at=yesterday).exists()


def test_undoing_a_new_items_first_grade_makes_it_new_again(client, learner):
    """A new item graded in the session and undone is new again: offered as new, counted as
    new, and grading it again is its first grade."""
    c = course_with_items(learner=learner, daily_new_limit=5)
    client.force_login(learner)
    html = client.get(reverse("quizzes:session")).content.decode()
    assert "(0 due, 3 new)" in html
    token = re.search(r'name="token" value="([0-9a-f-]{36})"', html).group(1)
    client.post(
        reverse("quizzes:grade"), {"item_id": c.mc.pk, "card_token": token, "rating": 3}, **HTMX
    )
    html = client.post(reverse("quizzes:undo"), **HTMX).content.decode()
    assert "Undid your grade" in html and "(0 due, 3 new)" in html
    assert f'name="item" value="{c.mc.pk}"' in html and ">new</span>" in html
    token = re.search(r'name="token" value="([0-9a-f-]{36})"', html).group(1)
    html = client.post(
        reverse("quizzes:grade"), {"item_id": c.mc.pk, "card_token": token, "rating": 3}, **HTMX
    ).content.decode()
    assert "(0 due, 2 new)" in html
    assert RecallSchedule.objects.get().reps == 1
    assert ReviewLog.objects.filter(undo__isnull=True).count() == 1


def test_item_history_from_a_reveal_and_the_stats_page(client, learner):
    """After a reveal and on the statistics page the learner can open an item's history: every
    grade with the interval it gave and the recall probability when it was made; undone grades
    are marked; another learner cannot open it."""
    c = course_with_items(learner=learner, daily_new_limit=0)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    client.force_login(learner)
    later = schedule.due + timedelta(days=1)
    with time_machine.travel(later, tick=False):
        reveal = client.get(
            reverse("quizzes:session"),
            {"reveal": 1, "schedule": schedule.pk, "token": str(schedule.card_token)},
            **HTMX,
        ).content.decode()
        history_url = reverse("quizzes:item_history", args=[c.recall.pk])
        assert f'href="{history_url}"' in reveal
        client.post(
            reverse("quizzes:grade"),
            {"schedule_id": schedule.pk, "card_token": str(schedule.card_token), "rating": 1},
            **HTMX,
        )
        schedule.refresh_from_db()
        client.post(
            reverse("quizzes:grade"),
            {"schedule_id": schedule.pk, "card_token": str(schedule.card_token), "rating": 3},
            **HTMX,
        )
        client.post(reverse("quizzes:undo"), **HTMX)
        stats = client.get(reverse("quizzes:stats")).content.decode()
        assert f'href="{history_url}"' in stats
        html = client.get(history_url).content.decode()
    table = html[html.index('data-testid="item-history"') :]
    rows = re.findall(r"<tr[^>]*>\s*<th scope=\"row\">", table)
    assert len(rows) == 3
    assert "first grade" in table and "Again" in table and "Good" in table
    assert re.search(r"\d+%", table)  # the recall probability of the second grade
    assert table.count(">undone<") == 1
    client.force_login(UserFactory())
    assert client.get(history_url).status_code == 404


def test_grading_another_learners_schedule_is_404(client, learner):
    """Another learner's schedule id is a 404 for grade and reveal."""
    other = UserFactory()
    c = course_with_items(learner=other)
    schedule_start(learner=other, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    client.force_login(learner)
    response = client.post(
        reverse("quizzes:grade"),
        {"schedule_id": schedule.pk, "card_token": str(schedule.card_token), "rating": 3},
    )
    assert response.status_code == 404
    response = client.get(
        reverse("quizzes:session"),
        {"reveal": 1, "schedule": schedule.pk, "token": str(schedule.card_token)},
    )
    assert response.status_code == 404
    assert ReviewLog.objects.count() == 1


def test_review_page_runs_a_constant_number_of_queries(client, learner):
    """The session page costs the same number of queries with 3 or 60 schedules."""
    c = course_with_items(learner=learner, daily_new_limit=3)
    client.force_login(learner)

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(reverse("quizzes:session")).status_code == 200
        return len(ctx)

    for item in (c.mc, c.numeric):
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=3, now=T0)
    # The session's first page also asks the role and keeps it in the session: the group query
    # and the session's save (in a test's transaction a savepoint, the update, its release).
    assert queries() <= 9
    small = queries()
    for _ in range(60):
        item = QuizItemFactory(lesson=c.lesson)
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=1, now=T0)
        QuizItemFactory(lesson=c.lesson)  # and new items
    # No more with 60 times the schedules (fewer when the card has no choices to load).
    assert queries() <= small
    # Session and user, the queue's counts (one statement), the card, its choices.
    assert small <= 5


@pytest.mark.postgres  # the counts are PostgreSQL's: elsewhere the write is two statements
def test_reveal_and_grade_run_a_constant_number_of_queries(client, learner):
    """Reveal (an htmx fragment) and grade (which renders the next card) each cost a fixed,
    small number of queries: the queue's counts are computed once per request."""
    c = course_with_items(learner=learner, daily_new_limit=3)
    for item in (c.mc, c.numeric, c.recall):
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=1, now=T0)
    client.force_login(learner)
    schedule = RecallSchedule.objects.order_by("due", "id").first()
    assert schedule is not None
    with CaptureQueriesContext(connection) as reveal:
        response = client.get(
            reverse("quizzes:session"),
            {"reveal": 1, "schedule": schedule.pk, "token": str(schedule.card_token)},
            **HTMX,
        )
    html = response.content.decode()
    assert response.status_code == 200 and 'data-testid="grade-3"' in html
    with CaptureQueriesContext(connection) as grade:
        response = client.post(
            reverse("quizzes:grade"),
            {"rating": 3, "schedule_id": schedule.pk, "card_token": str(schedule.card_token)},
            **HTMX,
        )
    assert response.status_code == 200 and count_of(response.content.decode()) == 2
    # Reveal resolves the learner's scheduling (parameter set and retention) in one query.
    scheduling = 1
    # Grade: session, user, the schedule with its scheduling (no lock), the update and the log
    # in one statement (no transaction), counts, the next card (numeric here, so no choices),
    # and the load balancer's one grouped count of reviews due per day over the fuzz range.
    assert len(grade) <= 7, [q["sql"][:60] for q in grade.captured_queries]
    # Reveal swaps only the card, without counting the queue: session, user, the card, its
    # choices; the grade buttons' load balancer, one grouped count of reviews due per day.
    balancer = 1
    assert len(reveal) <= 4 + scheduling + balancer


def test_lesson_answer_multiple_choice_feedback(client, learner):
    """A wrong multiple-choice answer shows each choice's reason and schedules the item as Again."""
    c = course_with_items(learner=learner)
    client.force_login(learner)
    response = client.post(
        reverse("quizzes:answer", args=[c.mc.pk]),
        {"choice": ["hbm"], "token": str(uuid.uuid4())},
        **HTMX,
    )
    html = response.content.decode()
    assert "Not quite" in html and "A rate, not memory." in html and c.mc.explanation in html
    log = ReviewLog.objects.get()
    assert log.rating == ReviewLog.Rating.AGAIN and log.source == ReviewLog.Source.LESSON
    right = client.post(
        reverse("quizzes:answer", args=[c.mc.pk]),
        {"choice": ["hbm", "gddr"], "token": str(uuid.uuid4())},
        **HTMX,
    ).content.decode()
    assert "Correct." in right and "did not change its schedule" in right
    assert ReviewLog.objects.count() == 1


def test_lesson_answer_numeric_within_tolerance_is_good(client, learner):
    """A numeric answer within tolerance is right and counts as Good."""
    c = course_with_items(learner=learner)
    client.force_login(learner)
    html = client.post(
        reverse("quizzes:answer", args=[c.numeric.pk]), {"value": "11.3"}, **HTMX
    ).content.decode()
    assert "Correct." in html and "11 users" in html
    assert ReviewLog.objects.get().rating == ReviewLog.Rating.GOOD


def test_lesson_free_recall_reveal_then_self_grade(client, learner):
    """Free recall: reveal shows the model answer and grade buttons; the learner's grade is kept."""
    c = course_with_items(learner=learner)
    client.force_login(learner)
    html = client.get(reverse("quizzes:answer_reveal", args=[c.recall.pk]), **HTMX).content.decode()
    assert "The model answer." in html and 'name="rating" value="2"' in html
    html = client.post(
        reverse("quizzes:answer", args=[c.recall.pk]), {"rating": "2"}, **HTMX
    ).content.decode()
    assert "You graded your recall: Hard" in html
    assert ReviewLog.objects.get().rating == ReviewLog.Rating.HARD


def test_free_recall_keeps_the_learners_own_answer_beside_the_model_answer(client, learner):
    """After "Show the model answer" the learner's own answer stays on screen beside it (and
    after they grade), so they can compare; it is escaped and never stored."""
    c = course_with_items(learner=learner)
    client.force_login(learner)
    own = "HBM <b>bandwidth</b> bounds decode"
    html = client.get(
        reverse("quizzes:answer_reveal", args=[c.recall.pk]), {"own_answer": own}, **HTMX
    ).content.decode()
    assert "The model answer." in html
    assert "HBM &lt;b&gt;bandwidth&lt;/b&gt; bounds decode" in html and "<b>bandwidth" not in html
    html = client.post(
        reverse("quizzes:answer", args=[c.recall.pk]), {"rating": "3", "own_answer": own}, **HTMX
    ).content.decode()
    assert "You graded your recall: Good" in html and "bounds decode" in html


def test_wrong_lesson_answer_never_says_zero_minutes(client, learner):
    """A wrong answer whose first step is a minute away says when it comes back in words a
    learner reads ("in 1 minute", "in under a minute"), never "0 minutes from now"."""
    c = course_with_items(learner=learner, learning_steps_minutes=[1, 10])
    client.force_login(learner)
    with time_machine.travel(T0, tick=False):
        html = client.post(
            reverse("quizzes:answer", args=[c.numeric.pk]), {"value": "3"}, **HTMX
        ).content.decode()
    assert "Not quite." in html and "it comes back in 1\xa0minute." in html


def test_lesson_answers_record_how_long_the_learner_took(client, learner):
    """A lesson answer's grade records its duration from when the item was shown (through the
    reveal for free recall), bounded to an hour."""
    c = course_with_items(learner=learner)
    client.force_login(learner)
    with time_machine.travel(T0, tick=False):
        page = client.get(c.lesson.get_absolute_url()).content.decode()
        shown = re.search(r'name="shown_at" value="(\d+)"', page).group(1)
        reveal = client.get(
            reverse("quizzes:answer_reveal", args=[c.recall.pk]), {"shown_at": shown}, **HTMX
        ).content.decode()
    assert f'name="shown_at" value="{shown}"' in reveal
    with time_machine.travel(T0 + timedelta(seconds=42), tick=False):
        client.post(
            reverse("quizzes:answer", args=[c.recall.pk]),
            {"rating": "3", "shown_at": shown},
            **HTMX,
        )
        client.post(
            reverse("quizzes:answer", args=[c.numeric.pk]),
            {"value": "11", "shown_at": str(int(T0.timestamp() * 1000) - 7_200_000)},
            **HTMX,
        )
    durations = dict(ReviewLog.objects.values_list("item_id", "duration_ms"))
    assert durations == {c.recall.pk: 42_000, c.numeric.pk: 3_600_000}


def test_lesson_items_work_without_javascript(client, learner):
    """Without htmx the forms still work: reveal, feedback and errors come on a page of their own
    that links back to the lesson (nothing is lost in a redirect)."""
    c = course_with_items(learner=learner)
    client.force_login(learner)
    back = f'href="{c.lesson.get_absolute_url()}#item-{c.recall.pk}"'
    reveal = client.get(reverse("quizzes:answer_reveal", args=[c.recall.pk]))
    html = reveal.content.decode()
    assert reveal.status_code == 200 and "<html" in html and back in html
    assert "The model answer." in html and 'name="rating" value="2"' in html
    html = client.post(
        reverse("quizzes:answer", args=[c.recall.pk]), {"rating": "2"}
    ).content.decode()
    assert "You graded your recall: Hard" in html
    html = client.post(
        reverse("quizzes:answer", args=[c.numeric.pk]), {"value": "x"}
    ).content.decode()
    assert "Your answer: Enter a number" in html
    html = client.post(
        reverse("quizzes:answer", args=[c.numeric.pk]), {"value": "11"}
    ).content.decode()
    assert 'data-testid="cy-feedback"' in html
    assert ReviewLog.objects.filter(learner=learner).count() == 2


def test_lesson_answer_needs_enrollment(client):
    """An item of a course the user is not enrolled in cannot be answered (404)."""
    c = course_with_items()
    user = UserFactory()
    client.force_login(user)
    response = client.post(reverse("quizzes:answer", args=[c.numeric.pk]), {"value": "11"})
    assert response.status_code == 404


def test_check_yourself_panel_renders_forms(learner, rf):
    """The lesson page's check-yourself panel renders one answerable form per item."""
    from quizzes.lesson_panel import check_yourself_panel

    c = course_with_items(learner=learner)
    request = rf.get("/")
    request.user = learner
    html = check_yourself_panel(request, c.lesson)
    assert html.count('data-testid="cy-item"') == 3
    assert 'type="checkbox"' in html and 'type="number"' in html
    assert "Show the model answer" in html


def test_single_answer_item_uses_radio_buttons(learner, rf):
    """One correct choice: radio buttons and "Choose one"; several: checkboxes and "every"."""
    from quizzes.lesson_panel import check_yourself_panel

    c = course_with_items(learner=learner)
    single = QuizItemFactory(lesson=c.lesson, kind="multiple_choice", position=9)
    ChoiceFactory(item=single, key="a", position=1, text="Eleven", is_correct=True)
    ChoiceFactory(item=single, key="b", position=2, text="Twelve")
    request = rf.get("/")
    request.user = learner
    html = check_yourself_panel(request, c.lesson)
    blocks = {
        m.group(1): m.group(2)
        for m in re.finditer(r'<li id="item-(\d+)"(.*?)</form>', html, flags=re.S)
    }
    single_html, multi_html = blocks[str(single.pk)], blocks[str(c.mc.pk)]
    assert single_html.count('type="radio"') == 2 and 'type="checkbox"' not in single_html
    assert "Choose one answer." in single_html and "Choose every" not in single_html
    assert multi_html.count('type="checkbox"') == 3 and 'type="radio"' not in multi_html
    assert "Choose every correct answer" in multi_html


def test_single_answer_item_without_a_choice_names_the_error(client, learner):
    """Submitting a single-answer item with nothing chosen says to choose an answer."""

    c = course_with_items(learner=learner)
    single = QuizItemFactory(lesson=c.lesson, kind="multiple_choice", position=9)
    ChoiceFactory(item=single, key="a", position=1, is_correct=True)
    ChoiceFactory(item=single, key="b", position=2)
    client.force_login(learner)
    html = client.post(
        reverse("quizzes:answer", args=[single.pk]),
        {"token": str(uuid.uuid4())},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert "Choose an answer." in html and 'aria-describedby="choice-error-' in html
    assert not RecallSchedule.objects.filter(item=single).exists()


def test_stats_pages(client, learner, instructor):
    """The learner sees figures and SVG charts; an instructor sees their course; others get 404."""
    c = course_with_items(learner=learner)
    for item in (c.mc, c.numeric, c.recall):
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=1, now=T0)
    client.force_login(learner)
    html = client.get(reverse("quizzes:stats")).content.decode()
    assert "<svg" in html and "true retention" in html and 'style="' not in html
    assert "Courses you teach" not in html
    EnrollmentFactory(course=c.course, user=instructor, role="instructor")
    client.force_login(instructor)
    html = client.get(reverse("quizzes:stats")).content.decode()
    assert reverse("quizzes:course_stats", args=[c.course.slug]) in html
    html = client.get(reverse("quizzes:course_stats", args=[c.course.slug])).content.decode()
    assert html.count('data-testid="item-row"') == 3 and "100%" in html
    other = course_with_items()
    assert client.get(reverse("quizzes:course_stats", args=[other.course.slug])).status_code == 404
    client.force_login(learner)
    assert client.get(reverse("quizzes:course_stats", args=[c.course.slug])).status_code == 403


def _table_rows(html: str, testid: str) -> list[tuple[str, str]]:
    block = re.search(rf'data-testid="{testid}".*?</details>', html, flags=re.S)
    assert block is not None, testid
    return re.findall(r'<tr><th scope="row">(.*?)</th><td>(.*?)</td></tr>', block.group(0))


def test_stats_charts_have_text_alternatives(client, learner):
    """Each chart is a titled image, and its figures are also a table: one row per bar, with the
    same values the bars are drawn from (screen readers and phones read the table)."""
    c = course_with_items(learner=learner)
    for item in (c.mc, c.numeric, c.recall):
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=1, now=T0)
    client.force_login(learner)
    with time_machine.travel(T0 + timedelta(hours=1), tick=False):
        html = client.get(reverse("quizzes:stats")).content.decode()
    assert html.count('role="img" aria-labelledby="forecast-title"') == 1
    assert '<title id="forecast-title">Reviews due on each of the next 30 days</title>' in html
    forecast = _table_rows(html, "forecast-data")
    assert len(forecast) == 30
    # The table's rows are the days the schedules fall due (learner in UTC, day from 04:00).
    dues = [d.strftime("%d %b") for d in RecallSchedule.objects.values_list("due", flat=True)]
    expected = [(day, str(dues.count(day))) for day, _ in forecast]
    assert (
        forecast[0][0] == "02 Mar"
        and forecast == expected
        and sum(map(int, dict(forecast).values())) == 3
    )
    history = _table_rows(html, "history-data")
    assert len(history) == 12 and {v for _, v in history} == {"no data"}
    assert "No reviews of cards in Review state yet" in html


def test_course_stats_empty_state(client, instructor):
    """A course nobody has answered yet says so and what will appear, instead of empty tables."""
    c = course_with_items()
    EnrollmentFactory(course=c.course, user=instructor, role="instructor")
    client.force_login(instructor)
    html = client.get(reverse("quizzes:course_stats", args=[c.course.slug])).content.decode()
    assert 'data-testid="course-stats-empty"' in html and "None of this course's 3 items" in html
    assert 'data-testid="item-row"' not in html


def test_a_leech_is_suspended_shown_to_its_learner_and_brought_back(client, learner):
    """The eighth lapse suspends the card: it leaves the queue, the statistics page lists it as
    a leech, the learner brings it back; instructors still count it by its lapses."""
    from quizzes.selectors.course_stats import course_stats

    c = course_with_items(learner=learner, daily_new_limit=0, relearning_steps_minutes=[])
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    RecallSchedule.objects.update(lapses=7)
    schedule = RecallSchedule.objects.get()
    assert schedule.state == RecallSchedule.State.REVIEW
    client.force_login(learner)
    at = schedule.due + timedelta(days=1)
    with time_machine.travel(at, tick=False):
        html = client.post(
            reverse("quizzes:grade"),
            {"schedule_id": schedule.pk, "card_token": str(schedule.card_token), "rating": 1},
            **HTMX,
        ).content.decode()
        assert count_of(html) == 0
        schedule.refresh_from_db()
        assert schedule.suspended and schedule.lapses == 8
        later = schedule.due + timedelta(days=1)
    with time_machine.travel(later, tick=False):
        assert count_of(client.get(reverse("quizzes:session")).content.decode()) == 0
        stats = client.get(reverse("quizzes:stats")).content.decode()
        leeches = stats[stats.index('data-testid="leeches"') :]
        assert c.recall.prompt in leeches and "8 lapses" in leeches
        assert [s.item for s in course_stats(course=c.course, now=later).leeches] == [c.recall]
        response = client.post(reverse("quizzes:item_unsuspend", args=[c.recall.pk]))
        assert response.status_code == 302
        assert count_of(client.get(reverse("quizzes:session")).content.decode()) == 1
    schedule.refresh_from_db()
    assert not schedule.suspended and schedule.lapses == 8
    client.force_login(UserFactory())
    assert client.post(reverse("quizzes:item_unsuspend", args=[c.recall.pk])).status_code == 404
