"""Time away: a learner's break (first and last local day away, inclusive). Setting one moves
the reviews due in it to days before or after it, each within its own fuzz range, spread so no
day goes over the course's daily review limit; the reminder scan sends no digest in it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db import transaction
from fsrs.scheduler import FUZZ_RANGES

from accounts.local_day import learning_date, learning_day_bounds
from accounts.models import User
from quizzes.models import RecallSchedule
from quizzes.selectors.due_days import due_per_day, learner_today

# A break is time away, not a pause: longer absences are a reminder pause and a backlog.
MAX_BREAK_DAYS = 90
# Planned at most a year ahead (and far from the calendar's end, where a day's bounds overflow).
MAX_BREAK_AHEAD_DAYS = 366


class BreakError(ValueError):
    """A break that is not (first ≤ last, from today on, at most MAX_BREAK_DAYS days)."""


@dataclass(frozen=True)
class BreakResult:
    moved_before: int
    moved_after: int


def fuzz_range(interval_days: int) -> tuple[int, int]:
    """The fuzz range of an interval (fsrs's FUZZ_RANGES, the arithmetic of its
    `_get_fuzzed_interval` and of Anki's `constrained_fuzz_bounds`); no range under 2.5 days."""
    if interval_days < 2.5:
        return interval_days, interval_days
    delta = 1.0
    for fuzz in FUZZ_RANGES:
        delta += fuzz["factor"] * max(min(float(interval_days), fuzz["end"]) - fuzz["start"], 0.0)
    high = round(interval_days + delta)
    return min(max(2, round(interval_days - delta)), high), high


def _local(learner: User, moment: datetime) -> date:
    return learning_date(moment=moment, time_zone=learner.tz, day_start_hour=learner.day_start_hour)


def _target_day(
    *,
    due_day: date,
    last_day: date,
    start: date,
    end: date,
    today: date,
    load: Counter[date],
    limit: int,
) -> date:
    """The day a review due on `due_day` (last reviewed on `last_day`) moves to: a day of its
    fuzz range outside the break (earlier days first: an early review keeps recall above the
    goal, a late one lets it fall below), the least loaded one under the limit; with none,
    the day before the break (or, when that has passed, the day after it)."""
    low, high = fuzz_range((due_day - last_day).days)
    candidates = [
        last_day + timedelta(days=offset)
        for offset in range(low, high + 1)
        if not start <= last_day + timedelta(days=offset) <= end
        and last_day + timedelta(days=offset) >= today
    ]
    under = [day for day in candidates if load[day] < limit]
    if under:
        return min(under, key=lambda day: (load[day], day > end, abs((day - due_day).days)))
    before = start - timedelta(days=1)
    fallback = [day for day in (before, before - timedelta(days=1)) if day >= today]
    fallback += [end + timedelta(days=1), end + timedelta(days=2)]
    under = [day for day in fallback if load[day] < limit]
    return min(under or fallback, key=lambda day: (load[day], day > end))


def break_set(*, learner: User, start: date, end: date, now: datetime) -> BreakResult:
    """Save the learner's break and move the reviews due in it out of it. Queries: two reads
    (the reviews in the break, the load around it) and one bulk update."""
    today = learner_today(learner=learner, now=now)
    if end < start:
        raise BreakError("The last day away is before the first.")
    if start < today:
        raise BreakError("A break starts today or later.")
    if start > today + timedelta(days=MAX_BREAK_AHEAD_DAYS):
        raise BreakError(f"A break starts within {MAX_BREAK_AHEAD_DAYS} days from today.")
    if (end - start).days + 1 > MAX_BREAK_DAYS:
        raise BreakError(f"A break is at most {MAX_BREAK_DAYS} days.")
    first, _ = learning_day_bounds(
        day=start, time_zone=learner.tz, day_start_hour=learner.day_start_hour
    )
    _, last = learning_day_bounds(
        day=end, time_zone=learner.tz, day_start_hour=learner.day_start_hour
    )
    with transaction.atomic():
        learner.break_from, learner.break_to = start, end
        learner.save(update_fields=["break_from", "break_to"])
        away = list(
            RecallSchedule.objects.filter(
                learner=learner,
                suspended=False,
                reps__gt=0,
                state=RecallSchedule.State.REVIEW,
                due__gte=first,
                due__lt=last,
            )
            .select_related("course")
            .select_for_update(of=("self",))
            .order_by("due", "pk")
        )
        window = MAX_BREAK_DAYS * 2
        counts = due_per_day(
            learner=learner, today=today, first=0, last=(end - today).days + window
        )
        load: Counter[date] = Counter(
            {today + timedelta(days=offset): n for offset, n in counts.items()}
        )
        before = after = 0
        for schedule in away:
            due_day = _local(learner, schedule.due)
            last_day = _local(learner, schedule.last_review) if schedule.last_review else today
            day = _target_day(
                due_day=due_day,
                last_day=last_day,
                start=start,
                end=end,
                today=today,
                load=load,
                limit=max(int(schedule.course.daily_review_limit), 1),
            )
            load[due_day] -= 1
            load[day] += 1
            day_start, _ = learning_day_bounds(
                day=day, time_zone=learner.tz, day_start_hour=learner.day_start_hour
            )
            schedule.due = max(day_start, now) if day == today else day_start
            before += int(day < start)
            after += int(day > end)
        RecallSchedule.objects.bulk_update(away, ["due"])
    return BreakResult(moved_before=before, moved_after=after)


def break_clear(*, learner: User) -> None:
    learner.break_from = learner.break_to = None
    learner.save(update_fields=["break_from", "break_to"])
