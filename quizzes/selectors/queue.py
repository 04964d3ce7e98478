"""Reads for the review session: the learner's local day, the due queue, the next card.

Every read here is a fixed number of queries served by indexes: the due part by
RecallSchedule (learner, due), the daily counts by ReviewLog (learner, reviewed_at). The queue's
counts are one statement; nothing loads a learner's schedules into Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Case, Exists, F, Func, OuterRef, Q, QuerySet, Value, When

from accounts.local_day import day_bounds_at
from accounts.models import User
from courses.models import Enrollment
from quizzes.models import Choice, QuizItem, RecallSchedule, ReviewLog

# Without an enrollment to take limits from: no new items, the course default review cap.
DEFAULT_REVIEW_LIMIT = 200


def local_day_bounds(*, learner: User, now: datetime) -> tuple[datetime, datetime]:
    """Start and end (aware, in the learner's zone) of their current day, which begins at
    day_start_hour. The one definition lives in accounts.local_day."""
    return day_bounds_at(now=now, time_zone=learner.tz, day_start_hour=learner.day_start_hour)


def local_day_of(*, learner: User, moment: datetime) -> datetime:
    """The learner-day a moment belongs to, as that day's start (for grouping)."""
    return local_day_bounds(learner=learner, now=moment)[0]


def due_count_for(*, learner: User, now: datetime) -> int:
    # Served by the (learner, due) index.
    return RecallSchedule.objects.filter(learner=learner, due__lte=now).count()


def next_due_for(*, learner: User) -> datetime | None:
    """When the learner's earliest schedule falls due (None: nothing scheduled yet).

    One index lookup on (learner, due); the empty review page uses it to say what comes next.
    """
    return (
        RecallSchedule.objects.filter(learner=learner)
        .order_by("due")
        .values_list("due", flat=True)
        .first()
    )


def new_items_for(*, learner: User) -> QuerySet[QuizItem]:
    """Items of courses the learner is enrolled in that they have never answered, in course order."""
    scheduled = RecallSchedule.objects.filter(learner=learner, item=OuterRef("pk"))
    return (
        QuizItem.objects.filter(
            lesson__module__course__enrollments__user=learner,
            lesson__module__course__enrollments__role=Enrollment.Role.LEARNER,
        )
        .filter(~Exists(scheduled))
        .order_by(
            "lesson__module__course_id",
            "lesson__module__position",
            "lesson__position",
            "position",
            "id",
        )
    )


def enrolled_item_for(*, learner: User, item_id: int) -> QuizItem:
    """An item of a course the learner is enrolled in (raises QuizItem.DoesNotExist)."""
    return QuizItem.objects.select_related("lesson__module__course").get(
        pk=item_id,
        lesson__module__course__enrollments__user=learner,
        lesson__module__course__enrollments__role=Enrollment.Role.LEARNER,
    )


@dataclass(frozen=True)
class QueueCard:
    item: QuizItem
    schedule: RecallSchedule | None  # None for a new item
    choices: list[Choice]

    @property
    def is_new(self) -> bool:
        return self.schedule is None

    @property
    def single_answer(self) -> bool:
        """Multiple choice with exactly one correct choice (from the loaded choices, no query)."""
        return sum(1 for choice in self.choices if choice.is_correct) == 1


@dataclass(frozen=True)
class QueueCounts:
    due_count: int  # reviews left today: due now, within the daily review cap
    new_count: int  # new items left today, within the daily new limit
    reviews_today: int
    new_today: int


@dataclass(frozen=True)
class DueQueue:
    due_count: int  # reviews left today: due now, within the daily review cap
    new_count: int  # new items left today, within the daily new limit
    reviews_today: int
    new_today: int
    card: QueueCard | None

    @property
    def remaining(self) -> int:
        return self.due_count + self.new_count


# Four ORM-compiled queries (limits, today's grades, due ids, new item ids) in one statement;
# their values stay parameters. The counts stop at what is left of each daily limit (a LIMIT read
# from `remaining`, uncorrelated, which both PostgreSQL and SQLite accept), so a backlog of
# thousands costs what the day's limit costs.
_COUNTS_SQL = """
        WITH limits AS ({}), today AS ({}), remaining AS (
          SELECT
            CASE WHEN COALESCE(review_limit, %s) > reviews_today
              THEN COALESCE(review_limit, %s) - reviews_today ELSE 0 END AS reviews_left,
            CASE WHEN COALESCE(new_limit, 0) > new_today
              THEN COALESCE(new_limit, 0) - new_today ELSE 0 END AS new_left,
            new_today, reviews_today
          FROM limits CROSS JOIN today
        )
        SELECT
          (SELECT COUNT(*) FROM ({} LIMIT (SELECT reviews_left FROM remaining)) AS due),
          (SELECT COUNT(*) FROM ({} LIMIT (SELECT new_left FROM remaining)) AS new_items),
          reviews_today, new_today
        FROM remaining
    """


def _sql(queryset: QuerySet[Any]) -> tuple[str, tuple[Any, ...]]:
    """A queryset compiled for the default connection, to be nested in a larger statement."""
    sql, params = queryset.query.sql_with_params()
    return sql, tuple(params)


def _count_sql(condition: Q) -> Func:
    # COUNT over a CASE, not Count(filter=...): an aggregate here would make the ORM add a GROUP BY,
    # and a GROUP BY over no rows returns no row instead of zeros.
    return Func(Case(When(condition, then=Value(1))), function="COUNT")


def _counts_statement(
    *, learner_id: int, day_start: datetime, now: datetime
) -> tuple[str, tuple[Any, ...]]:
    learner = User(pk=learner_id)
    limits = (
        Enrollment.objects.filter(user=learner, role=Enrollment.Role.LEARNER)
        .order_by()
        .annotate(
            new_limit=Func(F("course__daily_new_limit"), function="MAX"),
            review_limit=Func(F("course__daily_review_limit"), function="MAX"),
        )
        .values("new_limit", "review_limit")
    )
    # A grade whose state before had no reps introduced a new item; the rest were reviews.
    # Lesson answers are learning, not reviews, and do not count against the session's limits.
    today = (
        ReviewLog.objects.filter(learner=learner, reviewed_at__gte=day_start, undo__isnull=True)
        .exclude(source=ReviewLog.Source.LESSON)
        .order_by()
        .annotate(
            new_today=_count_sql(Q(state_before__reps=0)),
            reviews_today=_count_sql(~Q(state_before__reps=0)),
        )
        .values("new_today", "reviews_today")
    )
    # No ORDER BY: only how many matters here.
    due = RecallSchedule.objects.filter(learner=learner, due__lte=now).order_by().values("id")
    new = new_items_for(learner=learner).order_by().values("id")
    parts = [_sql(limits), _sql(today), _sql(due), _sql(new)]
    statement = _COUNTS_SQL.format(*(sql for sql, _ in parts))
    params = (
        parts[0][1]
        + parts[1][1]
        + (DEFAULT_REVIEW_LIMIT, DEFAULT_REVIEW_LIMIT)
        + parts[2][1]
        + parts[3][1]
    )
    return statement, params


# On PostgreSQL the statement is compiled once per process with stand-in values, which are then
# swapped for the learner's, and run with server-side binding so psycopg prepares it on each
# connection: building the ORM queries and planning the statement cost more than running it.
_STAND_IN_LEARNER = -987_654_321
_STAND_IN_DAY_START = datetime(1901, 1, 1, tzinfo=UTC)
_STAND_IN_NOW = datetime(1902, 1, 1, tzinfo=UTC)


@cache
def _counts_template() -> tuple[str, tuple[Any, ...]]:
    return _counts_statement(
        learner_id=_STAND_IN_LEARNER, day_start=_STAND_IN_DAY_START, now=_STAND_IN_NOW
    )


def _bound(
    params: tuple[Any, ...], *, learner_id: int, day_start: datetime, now: datetime
) -> list[Any]:
    out: list[Any] = []
    for param in params:
        if type(param) is int and param == _STAND_IN_LEARNER:
            out.append(learner_id)
        elif isinstance(param, datetime) and param == _STAND_IN_DAY_START:
            out.append(day_start)
        elif isinstance(param, datetime) and param == _STAND_IN_NOW:
            out.append(now)
        else:
            out.append(param)
    return out


def queue_counts_for(*, learner: User, now: datetime) -> QueueCounts:
    """The queue's four counts in one statement: today's limits and grades, then the due reviews
    and the new items, each counted no further than what is left of its daily limit."""
    day_start, _ = local_day_bounds(learner=learner, now=now)
    if connection.vendor == "postgresql":
        import psycopg

        statement, template = _counts_template()
        params: Any = _bound(template, learner_id=learner.pk, day_start=day_start, now=now)
        connection.ensure_connection()
        raw = connection.connection
        # Only server-side binding cursors (this one) prepare; Django's own cursors bind on the
        # client and never do, so this changes nothing for them.
        raw.prepare_threshold = 0
        # Django's own wrapper, so the statement is logged and counted like every query.
        cursor = connection._prepare_cursor(psycopg.Cursor(raw))  # type: ignore[attr-defined]
    else:
        statement, params = _counts_statement(learner_id=learner.pk, day_start=day_start, now=now)
        cursor = connection.cursor()
    with cursor:
        cursor.execute(statement, params)
        due_count, new_count, reviews_today, new_today = cursor.fetchone()
    return QueueCounts(
        due_count=due_count, new_count=new_count, reviews_today=reviews_today, new_today=new_today
    )


def next_card_for(*, learner: User, now: datetime, counts: QueueCounts) -> QueueCard | None:
    """The oldest due review while reviews are left today, else the first new item (two queries:
    the card, then its choices)."""
    card: QueueCard | None = None
    if counts.due_count:
        schedule = (
            RecallSchedule.objects.filter(learner=learner, due__lte=now)
            .select_related("item__lesson__module__course")
            .order_by("due", "id")
            .first()
        )
        if schedule is not None:
            card = QueueCard(item=schedule.item, schedule=schedule, choices=[])
    elif counts.new_count:
        item = new_items_for(learner=learner).select_related("lesson__module__course").first()
        if item is not None:
            card = QueueCard(item=item, schedule=None, choices=[])
    if card is not None:
        # Always one query (empty unless multiple choice): the page's cost stays constant.
        card.choices.extend(Choice.objects.filter(item=card.item).order_by("position", "id"))
    return card


def due_queue_for(*, learner: User, now: datetime, with_card: bool = True) -> DueQueue:
    """Due reviews oldest first, then new items up to the daily new limit; a daily review cap.

    One query for the counts, and with the card two more, whatever the number of schedules.
    """
    counts = queue_counts_for(learner=learner, now=now)
    card = next_card_for(learner=learner, now=now, counts=counts) if with_card else None
    return DueQueue(
        due_count=counts.due_count,
        new_count=counts.new_count,
        reviews_today=counts.reviews_today,
        new_today=counts.new_today,
        card=card,
    )


def card_for(*, learner: User, schedule_id: int | None, item_id: int | None) -> QueueCard:
    """The card a reveal or grade refers to, scoped to the learner (raises DoesNotExist)."""
    if schedule_id is not None:
        schedule = RecallSchedule.objects.select_related("item__lesson__module__course").get(
            learner=learner, pk=schedule_id
        )
        item = schedule.item
    else:
        if item_id is None:
            raise QuizItem.DoesNotExist("a card is a schedule or a new item")
        item = (
            new_items_for(learner=learner).select_related("lesson__module__course").get(pk=item_id)
        )
        schedule = None
    choices = (
        list(Choice.objects.filter(item=item).order_by("position", "id"))
        if item.kind == QuizItem.Kind.MULTIPLE_CHOICE
        else []
    )
    return QueueCard(item=item, schedule=schedule, choices=choices)
