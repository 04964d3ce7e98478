"""The simulated weeks behind `manage.py recall simulate`: a course's items run, in memory,
through the scheduler the platform grades with (FSRS-6 with the seeded fuzz and the load
balancer over the learner's week), answered at FSRS's own recall probability.

Nothing is written: each learner's cards and due counts live in dictionaries for the run.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from statistics import fmean, pstdev

import fsrs

from courses.models import Course
from quizzes.services import fsrs_adapter
from quizzes.services.load_balancer import LearnerWeek

WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# The daily count's variation is measured after the first week, when every learner has started
# reviewing (the definition).
SETTLING_DAYS = 7
# Learners join over the first week (each on a seeded day), as a course's learners enrol on
# different days; one shared first day would make every learner's reviews fall due together.
JOIN_DAYS = 7
# Intraday (re)learning steps answered in one sitting before the card leaves for another day.
MAX_STEPS_A_DAY = 10


@dataclass(frozen=True)
class SimulationSettings:
    learners: int
    days: int
    seed: int
    easy_days: str = "nnnnnnn"
    load_balance: bool = True
    start: date = date(2026, 1, 5)  # a Monday


@dataclass(frozen=True)
class SimulatedDay:
    day: date
    reviews: int


@dataclass
class SimulationResult:
    days: list[SimulatedDay]
    recalled: int = 0
    answered: int = 0
    items: int = 0

    @property
    def settled(self) -> list[int]:
        counts = [d.reviews for d in self.days]
        return counts[SETTLING_DAYS:] if len(counts) > SETTLING_DAYS else counts

    @property
    def mean_reviews(self) -> float:
        return fmean(self.settled) if self.settled else 0.0

    @property
    def cv(self) -> float:
        mean = self.mean_reviews
        return pstdev(self.settled) / mean if mean > 0 and len(self.settled) > 1 else 0.0

    @property
    def retention(self) -> float:
        return self.recalled / self.answered if self.answered else 0.0

    def as_json(self, settings: SimulationSettings) -> dict[str, object]:
        return {
            "learners": settings.learners,
            "items": self.items,
            "load_balance": settings.load_balance,
            "easy_days": settings.easy_days,
            "seed": settings.seed,
            "days": [
                {
                    "date": d.day.isoformat(),
                    "weekday": WEEKDAY_NAMES[d.day.weekday()],
                    "reviews": d.reviews,
                }
                for d in self.days
            ],
            "mean_reviews": round(self.mean_reviews, 3),
            "cv": round(self.cv, 4),
            "retention": round(self.retention, 4),
        }


def _seed(*parts: object) -> int:
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@dataclass
class _Learner:
    """One simulated learner: their cards (item → card, reps) and reviews due per day index."""

    index: int
    rng: random.Random
    cards: dict[int, fsrs.Card] = field(default_factory=dict)
    reps: dict[int, int] = field(default_factory=dict)
    due_day: dict[int, int] = field(default_factory=dict)
    due_count: Counter[int] = field(default_factory=Counter)


def _week(
    learner: _Learner, *, today: int, start: date, settings: SimulationSettings
) -> LearnerWeek:
    counts = learner.due_count

    def due(first: int, last: int) -> dict[int, int]:
        return {off: counts[today + off] for off in range(first, last + 1)}

    def level(offset: int) -> str:
        return settings.easy_days[(start + timedelta(days=today + offset)).weekday()]

    return LearnerWeek(
        counts=due,
        level=level,
        away=lambda offset: False,
        balance=lambda: settings.load_balance,
    )


def _day_index(moment: datetime, origin: datetime) -> int:
    return (moment - origin) // timedelta(days=1)


def _answer(
    learner: _Learner,
    scheduler: fsrs_adapter.SeededScheduler,
    *,
    item: int,
    at: datetime,
    first: bool,
) -> bool:
    """One sitting with a card: answered at its recall probability (Good or Again), then its
    same-day steps; True when the first answer was recalled."""
    card = learner.cards[item]
    recalled_first = True
    for step in range(MAX_STEPS_A_DAY):
        if first and step == 0:
            rating = fsrs.Rating.Good  # the lesson just taught it
        else:
            probability = scheduler.get_card_retrievability(card, current_datetime=at)
            recalled = learner.rng.random() < probability
            rating = fsrs.Rating.Good if recalled else fsrs.Rating.Again
            if step == 0:
                recalled_first = recalled
        scheduler.seed = _seed(learner.index, item, learner.reps[item])
        card, _log = scheduler.review_card(card, rating, review_datetime=at)
        learner.reps[item] += 1
        if card.due >= at + timedelta(hours=12):
            break
        at = max(card.due, at)
    learner.cards[item] = card
    return recalled_first


def simulate(
    *, course: Course, item_ids: list[int], settings: SimulationSettings
) -> SimulationResult:
    """Run `settings.learners` learners through `settings.days` days of the course."""
    result = SimulationResult(
        days=[SimulatedDay(settings.start + timedelta(days=d), 0) for d in range(settings.days)],
        items=len(item_ids),
    )
    reviews = [0] * settings.days
    origin = datetime.combine(settings.start, time(0), tzinfo=UTC)
    new_limit = max(int(course.daily_new_limit), 0)
    review_limit = max(int(course.daily_review_limit), 1)
    scheduling = fsrs_adapter.scheduling_for(course=course, learner_id=None)
    for index in range(settings.learners):
        learner = _Learner(index=index, rng=random.Random(_seed(settings.seed, "answers", index)))
        scheduler = fsrs_adapter.scheduler_for(course, scheduling, seed=0)
        assert isinstance(scheduler, fsrs_adapter.SeededScheduler)
        waiting = list(item_ids)
        joined = learner.rng.randrange(min(JOIN_DAYS, settings.days))
        for today in range(joined, settings.days):
            at = origin + timedelta(days=today, hours=12)
            due = sorted((day, item) for item, day in learner.due_day.items() if day <= today)[
                :review_limit
            ]
            for _day, item in due:
                scheduler.week = _week(
                    learner, today=today, start=settings.start, settings=settings
                )
                learner.due_count[learner.due_day[item]] -= 1
                recalled = _answer(learner, scheduler, item=item, at=at, first=False)
                reviews[today] += 1
                result.answered += 1
                result.recalled += int(recalled)
                _settle(learner, item=item, origin=origin)
            for item in waiting[:new_limit]:
                scheduler.week = _week(
                    learner, today=today, start=settings.start, settings=settings
                )
                learner.cards[item] = fsrs.Card(card_id=item, due=at)
                learner.reps[item] = 0
                _answer(learner, scheduler, item=item, at=at, first=True)
                _settle(learner, item=item, origin=origin)
            del waiting[:new_limit]
    result.days = [SimulatedDay(d.day, reviews[i]) for i, d in enumerate(result.days)]
    return result


def _settle(learner: _Learner, *, item: int, origin: datetime) -> None:
    day = _day_index(learner.cards[item].due, origin)
    learner.due_day[item] = day
    learner.due_count[day] += 1
