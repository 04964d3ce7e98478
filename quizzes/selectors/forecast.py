"""A learner's next 30 days: the reviews due each day as scheduled (with the load balancer)
and as plain fuzz would have placed them (without), their easy days and their break."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from accounts.local_day import learning_date, learning_day_bounds
from accounts.models import User
from quizzes.models import RecallSchedule
from quizzes.selectors.due_days import learner_today
from quizzes.services import fsrs_adapter
from quizzes.services.easy_days import LEVEL_NAMES, easy_day_level, on_break

FORECAST_DAYS = 30


@dataclass(frozen=True)
class ForecastDay:
    day: date
    easy_day: str  # "normal" | "reduced" | "minimum"
    away: bool
    balanced: int
    unbalanced: int


def week_forecast(*, learner: User, now: datetime) -> list[ForecastDay]:
    """Each of the next FORECAST_DAYS learning days (today first, with what is overdue). Where a
    review would have fallen without the balancer: its last grade's interval with plain fuzz, the
    same seed (FSRS's interval for its stability and the course's retention). One query."""
    today = learner_today(learner=learner, now=now)
    last_day = today + timedelta(days=FORECAST_DAYS - 1)
    _start, end = learning_day_bounds(
        day=last_day, time_zone=learner.tz, day_start_hour=learner.day_start_hour
    )
    rows = RecallSchedule.objects.filter(
        learner=learner, suspended=False, reps__gt=0, due__lt=end
    ).select_related("course")
    balanced: Counter[date] = Counter()
    unbalanced: Counter[date] = Counter()
    plain: dict[int, fsrs_adapter.SeededScheduler] = {}
    for schedule in rows:
        day = max(_local(learner, schedule.due), today)
        balanced[day] += 1
        unbalanced[_unbalanced_day(learner, schedule, plain, today) or day] += 1
    return [
        ForecastDay(
            day=day,
            easy_day=LEVEL_NAMES[easy_day_level(easy_days=learner.easy_days, day=day)],
            away=on_break(learner=learner, day=day),
            balanced=balanced[day],
            unbalanced=unbalanced[day],
        )
        for day in (today + timedelta(days=n) for n in range(FORECAST_DAYS))
    ]


def _local(learner: User, moment: datetime) -> date:
    return learning_date(moment=moment, time_zone=learner.tz, day_start_hour=learner.day_start_hour)


def _unbalanced_day(
    learner: User,
    schedule: RecallSchedule,
    plain: dict[int, fsrs_adapter.SeededScheduler],
    today: date,
) -> date | None:
    if schedule.state != RecallSchedule.State.REVIEW or schedule.last_review is None:
        return None
    scheduler = plain.get(schedule.course_id)
    if scheduler is None:
        made = fsrs_adapter.scheduler_for(schedule.course, seed=0)
        assert isinstance(made, fsrs_adapter.SeededScheduler)
        scheduler = plain[schedule.course_id] = made
    interval = scheduler._next_interval(stability=schedule.stability or 0.1)
    scheduler.seed = fsrs_adapter.fuzz_seed(
        learner_id=learner.pk, item_id=schedule.item_id, reps=schedule.reps - 1
    )
    fuzzed = scheduler._get_fuzzed_interval(interval=timedelta(days=interval))
    return max(_local(learner, schedule.last_review + fuzzed), today)
