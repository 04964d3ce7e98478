"""Loading a review card: the schedule (or new item) with its item, lesson, module, course and
choices, read as one prepared row of values and turned into model instances.

Building and planning a select_related query cost more than running it, so each card query is
a `PreparedQuery`: compiled once per process, prepared once per connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from accounts.models import User
from courses.models import Course, Enrollment, Lesson, Module
from quizzes.models import Choice, QuizItem, RecallSchedule
from quizzes.selectors.prepared import PreparedQuery
from quizzes.selectors.scheduling import SchedulingRow, scheduling_columns

LEARN_AHEAD = timedelta(minutes=20)
LEARNING_STATES = (RecallSchedule.State.LEARNING, RecallSchedule.State.RELEARNING)


def new_items_for(*, learner: User) -> QuerySet[QuizItem]:
    """Items of courses the learner is enrolled in that they have never answered, in course order."""
    # A schedule without reps had its first grade undone: its item is new again.
    scheduled = RecallSchedule.objects.filter(learner=learner, item=OuterRef("pk"), reps__gt=0)
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


_SCHEDULE_FIELDS = tuple(f.attname for f in RecallSchedule._meta.concrete_fields)
_ITEM_FIELDS = tuple(f.attname for f in QuizItem._meta.concrete_fields)
_LESSON_FIELDS = ("id", "module_id", "slug", "title", "position")
_MODULE_FIELDS = tuple(f.attname for f in Module._meta.concrete_fields)
_COURSE_FIELDS = tuple(f.attname for f in Course._meta.concrete_fields if f.name != "summary")
_CHOICE_FIELDS = tuple(f.attname for f in Choice._meta.concrete_fields)


def _lookup(prefix: str, attname: str) -> str:
    # values_list names a foreign key by its field name ("lesson"), not its attname.
    name = attname.removesuffix("_id") if attname.endswith("_id") and attname != "id" else attname
    return f"{prefix}{name}"


def _item_columns(prefix: str) -> list[str]:
    return (
        [_lookup(prefix, f) for f in _ITEM_FIELDS]
        + [_lookup(f"{prefix}lesson__", f) for f in _LESSON_FIELDS]
        + [_lookup(f"{prefix}lesson__module__", f) for f in _MODULE_FIELDS]
        + [_lookup(f"{prefix}lesson__module__course__", f) for f in _COURSE_FIELDS]
    )


def _item_from_row(row: tuple[Any, ...]) -> QuizItem:
    """A QuizItem with its lesson, module and course attached, from `_item_columns`' values."""
    db = connection.alias
    at = 0
    parts: list[tuple[Any, ...]] = []
    for fields in (_ITEM_FIELDS, _LESSON_FIELDS, _MODULE_FIELDS, _COURSE_FIELDS):
        parts.append(row[at : at + len(fields)])
        at += len(fields)
    item = QuizItem.from_db(db, _ITEM_FIELDS, parts[0])
    lesson = Lesson.from_db(db, _LESSON_FIELDS, parts[1])
    module = Module.from_db(db, _MODULE_FIELDS, parts[2])
    course = Course.from_db(db, _COURSE_FIELDS, parts[3])
    module.course = course
    lesson.module = module
    item.lesson = lesson
    return item


def _due_card_queryset(
    *,
    learner_id: int,
    learn_ahead_until: datetime,
    day_end: datetime,
    enrolled: list[int],
    reviewing: list[int],
) -> QuerySet[Any]:
    learning = Q(
        state__in=LEARNING_STATES,
        due__lte=learn_ahead_until,
        course_id__in=enrolled,
    )
    review = Q(
        state=RecallSchedule.State.REVIEW,
        due__lt=day_end,
        course_id__in=reviewing,
    )
    return (
        RecallSchedule.objects.filter(learner_id=learner_id, reps__gt=0, suspended=False)
        .filter(learning | review)
        .order_by("due", "id")
        .values_list(*[_lookup("", f) for f in _SCHEDULE_FIELDS], *_item_columns("item__"))[:1]
    )


def _new_card_queryset(*, learner_id: int, courses: list[int]) -> QuerySet[Any]:
    return (
        new_items_for(learner=User(pk=learner_id))
        .filter(lesson__module__course_id__in=courses)
        .values_list(*_item_columns(""))[:1]
    )


def _choices_queryset(*, item_id: int) -> QuerySet[Any]:
    return (
        Choice.objects.filter(item_id=item_id)
        .order_by("position", "id")
        .values_list(*[_lookup("", f) for f in _CHOICE_FIELDS])
    )


def _schedule_card_queryset(*, learner_id: int, schedule_id: int) -> QuerySet[Any]:
    return RecallSchedule.objects.filter(learner_id=learner_id, pk=schedule_id).values_list(
        *[_lookup("", f) for f in _SCHEDULE_FIELDS], *_item_columns("item__")
    )


def _new_item_queryset(*, learner_id: int, item_id: int) -> QuerySet[Any]:
    return (
        new_items_for(learner=User(pk=learner_id))
        .filter(pk=item_id)
        .values_list(*_item_columns(""))
    )


# What a grade needs of the schedule's course: the settings its scheduler is built from.
GRADED_COURSE_FIELDS = (
    "id", "desired_retention", "learning_steps_minutes", "relearning_steps_minutes",
    "maximum_interval_days",
)  # fmt: skip


def _graded_schedule_queryset(*, learner_id: int, schedule_id: int) -> QuerySet[Any]:
    # What schedules the grade is read in the same statement. No lock: the grade writes only if
    # the card token is still the one read here.
    scheduling = scheduling_columns(
        course_id=OuterRef("course_id"), learner_id=OuterRef("learner_id")
    )
    course = "course__"
    return RecallSchedule.objects.filter(learner_id=learner_id, pk=schedule_id).values_list(
        *[_lookup("", f) for f in _SCHEDULE_FIELDS],
        *[f"{course}{f}" for f in GRADED_COURSE_FIELDS],
        *scheduling,
    )


_DUE_CARD = PreparedQuery(_due_card_queryset)
_NEW_CARD = PreparedQuery(_new_card_queryset)
_CHOICES = PreparedQuery(_choices_queryset)
_SCHEDULE_CARD = PreparedQuery(_schedule_card_queryset)
_NEW_ITEM = PreparedQuery(_new_item_queryset)
_GRADED_SCHEDULE = PreparedQuery(_graded_schedule_queryset)


def _schedule_card(row: tuple[Any, ...]) -> QueueCard:
    schedule = RecallSchedule.from_db(
        connection.alias, _SCHEDULE_FIELDS, row[: len(_SCHEDULE_FIELDS)]
    )
    item = _item_from_row(row[len(_SCHEDULE_FIELDS) :])
    schedule.item = item
    return QueueCard(item=item, schedule=schedule, choices=[])


def _with_choices(card: QueueCard) -> QueueCard:
    """Its choices for a multiple-choice card (one query); no query for the other kinds."""
    if card.item.kind == QuizItem.Kind.MULTIPLE_CHOICE:
        card.choices.extend(
            Choice.from_db(connection.alias, _CHOICE_FIELDS, row)
            for row in _CHOICES.rows(item_id=card.item.pk)
        )
    return card


def card_for(*, learner: User, schedule_id: int | None, item_id: int | None) -> QueueCard:
    """The card a reveal or grade refers to, scoped to the learner (raises DoesNotExist)."""
    if schedule_id is not None:
        rows = _SCHEDULE_CARD.rows(learner_id=learner.pk, schedule_id=schedule_id)
        if not rows:
            raise RecallSchedule.DoesNotExist("no such schedule of this learner")
        return _with_choices(_schedule_card(rows[0]))
    if item_id is None:
        raise QuizItem.DoesNotExist("a card is a schedule or a new item")
    rows = _NEW_ITEM.rows(learner_id=learner.pk, item_id=item_id)
    if not rows:
        raise QuizItem.DoesNotExist("no such new item for this learner")
    return _with_choices(QueueCard(item=_item_from_row(rows[0]), schedule=None, choices=[]))


def schedule_for_grade(
    *, learner: User, schedule_id: int
) -> tuple[RecallSchedule, Course, SchedulingRow]:
    """The learner's schedule, its course's scheduling settings (the other fields deferred) and
    what schedules that course for them (`scheduling_row`): one prepared statement, no lock (the
    grade's write checks the card token); raises RecallSchedule.DoesNotExist."""
    rows = _GRADED_SCHEDULE.rows(learner_id=learner.pk, schedule_id=schedule_id)
    if not rows:
        raise RecallSchedule.DoesNotExist("no such schedule of this learner")
    row = rows[0]
    at = len(_SCHEDULE_FIELDS)
    schedule = RecallSchedule.from_db(connection.alias, _SCHEDULE_FIELDS, row[:at])
    fields = GRADED_COURSE_FIELDS
    course = Course.from_db(connection.alias, fields, row[at : at + len(fields)])
    parameters_id, weights, own = row[at + len(fields) :]
    return schedule, course, (parameters_id, weights, own)


def due_card_for(
    *, learner: User, learn_ahead_until: datetime, day_end: datetime,
    enrolled: list[int], reviewing: list[int],
) -> QueueCard | None:  # fmt: skip
    """The oldest due schedule: a learning step of an enrolled course due by `learn_ahead_until`,
    or a review of a course in `reviewing` due before `day_end` (one query, and its choices)."""
    rows = _DUE_CARD.rows(
        learner_id=learner.pk,
        learn_ahead_until=learn_ahead_until,
        day_end=day_end,
        enrolled=enrolled,
        reviewing=reviewing,
    )
    return _with_choices(_schedule_card(rows[0])) if rows else None


def first_new_card_for(*, learner: User, courses: list[int]) -> QueueCard | None:
    """The first never-answered item of `courses`, in course order (one query, and choices)."""
    rows = _NEW_CARD.rows(learner_id=learner.pk, courses=courses)
    if not rows:
        return None
    return _with_choices(QueueCard(item=_item_from_row(rows[0]), schedule=None, choices=[]))


def schedule_locked_for(*, learner: User, **lookup: object) -> RecallSchedule:
    """The learner's schedule, its row locked for the caller's transaction (raises
    DoesNotExist). Only the schedule row: not the joined item, lesson, module and course."""
    return (
        RecallSchedule.objects.select_for_update(of=("self",))
        .select_related("item__lesson__module__course")
        .get(learner=learner, **lookup)
    )
