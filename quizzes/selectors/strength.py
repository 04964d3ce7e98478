"""The learner's strength by module: items, how many are in reviews, and mean recall now,
computed in the database with fsrs's retrievability formula."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import fsrs
from django.db import connection
from django.db.models import (
    Avg,
    Case,
    Count,
    DateTimeField,
    DurationField,
    Expression,
    ExpressionWrapper,
    F,
    FilteredRelation,
    FloatField,
    Func,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Greatest, Power

from accounts.models import User
from courses.models import Course, Enrollment, Module
from quizzes.selectors.prepared import PreparedQuery
from quizzes.services import fsrs_adapter


@dataclass(frozen=True)
class ModuleStrength:
    module: Module
    items: int
    scheduled: int
    mean_recall: float | None  # mean probability of recall now, over scheduled items


def _recall_now(
    *, now: datetime, schedulers: dict[int, fsrs.Scheduler], schedule: str = ""
) -> Expression:
    """SQL for fsrs's retrievability of a schedule at `now` (Scheduler.get_card_retrievability):
    (1 + factor × elapsed whole days / stability) ^ decay, and 0 for a card never reviewed.

    decay = −w20 and factor = 0.9^(1/decay) − 1 from each course's parameters (FSRS-6), chosen by
    the schedule's course when courses differ. `schedule` is the path to the schedule's fields
    ("" on a schedule queryset, "mine__" through a relation named `mine`).
    """
    curves = {
        course_id: (-scheduler.parameters[20], 0.9 ** (1 / -scheduler.parameters[20]) - 1)
        for course_id, scheduler in schedulers.items()
    }

    def by_course(index: int) -> Expression:
        values = {curve[index] for curve in curves.values()}
        if len(values) <= 1:
            return Value(values.pop() if values else 0.0, output_field=FloatField())
        return Case(
            *(
                When(
                    Q(**{f"{schedule}item__lesson__module__course_id": course_id}),
                    then=Value(curve[index]),
                )
                for course_id, curve in curves.items()
            ),
            output_field=FloatField(),
        )

    elapsed = Greatest(
        _WholeDays(
            ExpressionWrapper(
                Value(now, output_field=DateTimeField()) - F(f"{schedule}last_review"),
                output_field=DurationField(),
            )
        ),
        Value(0.0),
    )
    never = Q(**{f"{schedule}last_review__isnull": True}) | Q(
        **{f"{schedule}stability__isnull": True}
    )
    return Case(
        When(never, then=Value(0.0)),
        default=Power(
            Value(1.0) + by_course(1) * elapsed / F(f"{schedule}stability"), by_course(0)
        ),
        output_field=FloatField(),
    )


class _WholeDays(Func):
    """Whole days in a duration, as timedelta.days counts them (only its non-negative values
    are used: the caller clamps at 0, where truncation and floor agree)."""

    output_field = FloatField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="FLOOR(EXTRACT(EPOCH FROM %(expressions)s) / 86400)"
        )

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        # Django's SQLite backend subtracts datetimes into whole microseconds.
        return self.as_sql(compiler, connection, template="(%(expressions)s / 86400000000)")


def _modules_queryset(*, learner_id: int, now: datetime) -> QuerySet[Any]:
    """Per module of the learner's courses, in the page's order: its fields, its course's, its
    items, the learner's schedules of them and their mean recall now. The schedules join only
    the learner's (a filtered relation: one row per item at most, so the items count stays)."""
    course_ids = Enrollment.objects.filter(user_id=learner_id).values("course_id")
    return (
        Module.objects.filter(course_id__in=course_ids)
        .annotate(
            mine=FilteredRelation(
                "lessons__quiz_items__recall_schedules",
                condition=Q(lessons__quiz_items__recall_schedules__learner_id=learner_id),
            )
        )
        .annotate(
            items=Count("lessons__quiz_items"),
            n=Count("mine__id"),
            mean=Avg(
                _recall_now(now=now, schedulers=_DEFAULT_CURVE, schedule="mine__"),
                filter=Q(mine__id__isnull=False),
            ),
        )
        .order_by("course__title", "position")
        .values_list(
            *_MODULE_FIELDS, *(f"course__{f}" for f in _COURSE_FIELDS), "items", "n", "mean"
        )
    )


_MODULE_FIELDS = ("id", "course_id", "slug", "title", "position")
_COURSE_FIELDS = ("id", "slug", "title")
_MODULES = PreparedQuery(_modules_queryset)
# The statistics use FSRS-6's default weights whatever the course (`scheduler_for` without a
# scheduling), so every course has the same forgetting curve: one scheduler gives it.
_DEFAULT_CURVE = {0: fsrs.Scheduler(parameters=fsrs_adapter.DEFAULT_WEIGHTS)}


def module_strength_for(*, learner: User, now: datetime) -> list[ModuleStrength]:
    """Per module of the learner's courses: items, how many are scheduled, mean recall now.

    One query; the mean recall is computed in the database, one row per module.
    """
    db = connection.alias
    strengths = []
    courses: dict[int, Course] = {}  # one instance per course, shared by its modules
    fields = len(_MODULE_FIELDS)
    for row in _MODULES.rows(learner_id=learner.pk, now=now):
        module = Module.from_db(db, _MODULE_FIELDS, row[:fields])
        course_id = row[fields]
        if course_id not in courses:
            courses[course_id] = Course.from_db(db, _COURSE_FIELDS, row[fields : fields + 3])
        module.course = courses[course_id]
        items, scheduled, mean = row[fields + 3 :]
        strengths.append(
            ModuleStrength(module=module, items=items, scheduled=scheduled, mean_recall=mean)
        )
    return strengths
