"""The learner's strength by module: items, how many are in reviews, and mean recall now,
computed in the database with fsrs's retrievability formula."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import fsrs
from django.db.models import (
    Avg,
    Case,
    Count,
    DateTimeField,
    DurationField,
    Expression,
    ExpressionWrapper,
    F,
    FloatField,
    Func,
    Q,
    Value,
    When,
)
from django.db.models.functions import Greatest, Power

from accounts.models import User
from courses.models import Enrollment, Module
from quizzes.models import RecallSchedule
from quizzes.services import fsrs_adapter


@dataclass(frozen=True)
class ModuleStrength:
    module: Module
    items: int
    scheduled: int
    mean_recall: float | None  # mean probability of recall now, over scheduled items


def _recall_now(*, now: datetime, schedulers: dict[int, fsrs.Scheduler]) -> Expression:
    """SQL for fsrs's retrievability of a schedule at `now` (Scheduler.get_card_retrievability):
    (1 + factor × elapsed whole days / stability) ^ decay, and 0 for a card never reviewed.

    decay = −w20 and factor = 0.9^(1/decay) − 1 from each course's parameters (FSRS-6), chosen by
    the schedule's course when courses differ.
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
                When(item__lesson__module__course_id=course_id, then=Value(curve[index]))
                for course_id, curve in curves.items()
            ),
            output_field=FloatField(),
        )

    elapsed = Greatest(
        _WholeDays(
            ExpressionWrapper(
                Value(now, output_field=DateTimeField()) - F("last_review"),
                output_field=DurationField(),
            )
        ),
        Value(0.0),
    )
    return Case(
        When(Q(last_review__isnull=True) | Q(stability__isnull=True), then=Value(0.0)),
        default=Power(Value(1.0) + by_course(1) * elapsed / F("stability"), by_course(0)),
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


def module_strength_for(*, learner: User, now: datetime) -> list[ModuleStrength]:
    """Per module of the learner's courses: items, how many are scheduled, mean recall now.

    Two queries; the mean recall is computed in the database, one row per module.
    """
    course_ids = Enrollment.objects.filter(user=learner).values("course_id")
    modules = list(
        Module.objects.filter(course_id__in=course_ids)
        .select_related("course")
        .annotate(items=Count("lessons__quiz_items"))
        .order_by("course__title", "position")
    )
    schedulers = {m.course_id: fsrs_adapter.scheduler_for(m.course) for m in modules}
    rows = (
        RecallSchedule.objects.filter(
            learner=learner, item__lesson__module__in=[m.pk for m in modules]
        )
        .values("item__lesson__module_id")
        .annotate(n=Count("id"), mean=Avg(_recall_now(now=now, schedulers=schedulers)))
        .order_by()
    )
    by_module = {row["item__lesson__module_id"]: (row["n"], row["mean"]) for row in rows}
    return [
        ModuleStrength(
            module=m,
            items=m.items,  # type: ignore[attr-defined]
            scheduled=by_module.get(m.pk, (0, None))[0],
            mean_recall=by_module.get(m.pk, (0, None))[1],
        )
        for m in modules
    ]
