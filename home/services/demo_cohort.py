"""The demo's simulated cohort: learners (labelled simulated, no password, no reminders) with
months of review history drawn from FSRS, so every instructor and learner page has data.

Each learner has an ability; each item a difficulty. A first answer is right with the
probability of a one-parameter logistic (Rasch) model, p = 1 / (1 + e^-(ability - difficulty))
(Rasch, G. (1960) "Probabilistic models for some intelligence and attainment tests"); each later
review is right with the card's FSRS recall probability at that moment, scaled by the learner's
ability. One item is simulated as miskeyed (stronger learners miss it more), so the item
analysis's negative-discrimination flag has something to show. The draws are seeded: the same
cohort every time. Rows go in with bulk inserts: the whole cohort takes seconds.
"""

from __future__ import annotations

import math
import random
import uuid
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import fsrs

from accounts.models import User
from courses.models import Course, Enrollment
from home.services.demo_choices import implausible_item, picked_choices
from quizzes.calculated import problem_for
from quizzes.models import QuizItem, RecallSchedule, ReviewLog, ReviewRollupWatermark
from quizzes.selectors.calculated_stats import GIB_PER_GB
from quizzes.services import fsrs_adapter

COHORT_SIZE = 60
EMAIL_DOMAIN = "simulated.invalid"  # RFC 2606: a domain that can never receive mail
SEED = 43
# Reviews per card at most, whatever the history's length.
MAX_REVIEWS = 20


def simulated_email(number: int) -> str:
    return f"simulated-{number:02d}@{EMAIL_DOMAIN}"


@dataclass
class Timeline:
    """One simulated card: its schedule's final state and the logs that led there."""

    card: fsrs.Card
    reps: int = 0
    lapses: int = 0
    logs: list[dict[str, Any]] = field(default_factory=list)


def _difficulty(item: QuizItem) -> float:
    """A stable difficulty in [-1.6, 1.6] from the item's key; calculated items are harder."""
    base = (zlib.crc32(item.key.encode()) % 1000) / 1000 * 3.2 - 1.6
    return base + (0.6 if item.kind == QuizItem.Kind.CALCULATED else 0.0)


def _miskeyed(items: list[QuizItem]) -> int | None:
    choice = [i for i in items if i.kind == QuizItem.Kind.MULTIPLE_CHOICE]
    return min(choice, key=lambda i: zlib.crc32(i.key.encode())).pk if choice else None


def _success_rating(rng: random.Random) -> int:
    roll = rng.random()
    return 2 if roll < 0.15 else 4 if roll > 0.9 else 3


def _answer_values(
    rng: random.Random, expected: float | None, right: bool
) -> tuple[float | None, float | None]:
    """A calculated item's typed number: near the answer when right, else a known mistake
    (GB/GiB, the factor 2 of K and V, bits for bytes) or a plain miss."""
    if expected is None:
        return None, None
    if right:
        return expected * rng.uniform(0.97, 1.03), expected
    roll = rng.random()
    factor = (
        GIB_PER_GB
        if roll < 0.3
        else 2.0
        if roll < 0.55
        else 8.0
        if roll < 0.65
        else rng.uniform(1.4, 3.0)
    )
    return expected * (factor if rng.random() < 0.5 else 1 / factor), expected


def _simulate(
    *,
    rng: random.Random,
    scheduler: fsrs.Scheduler,
    first_at: datetime,
    first_right: bool,
    ability: float,
    expected: float | None,
    now: datetime,
) -> Timeline:
    timeline = Timeline(card=fsrs_adapter.new_card(card_id=0, now=first_at))
    when, right = first_at, first_right
    while when < now and timeline.reps < MAX_REVIEWS:
        card = timeline.card
        rating = _success_rating(rng) if right else 1
        if timeline.reps == 0:
            rating = 3 if right else 1  # the lesson grades a first answer Good or Again
        scheduled = (
            (card.due - card.last_review).days
            if card.state == fsrs.State.Review and card.last_review
            else 0
        )
        before = fsrs_adapter.card_state_json(card, reps=timeline.reps, lapses=timeline.lapses)
        after_card = fsrs_adapter.review(scheduler=scheduler, card=card, rating=rating, now=when)
        if rating == 1 and card.state == fsrs.State.Review:
            timeline.lapses += 1
        timeline.reps += 1
        answer, shown = _answer_values(rng, expected, right)
        timeline.logs.append(
            {
                "rating": rating,
                "source": ReviewLog.Source.LESSON
                if timeline.reps == 1
                else ReviewLog.Source.REVIEW,
                "reviewed_at": when,
                "duration_ms": rng.randint(4_000, 40_000),
                "scheduled_days": scheduled,
                "state_before": before,
                "state_after": fsrs_adapter.card_state_json(
                    after_card, reps=timeline.reps, lapses=timeline.lapses
                ),
                "answer_value": answer,
                "expected_value": shown,
            }
        )
        timeline.card = after_card
        # The learner comes back some hours after the card falls due.
        when = after_card.due + timedelta(hours=rng.uniform(0, 20))
        recall = fsrs_adapter.retrievability(scheduler=scheduler, card=after_card, now=when)
        right = rng.random() < min(0.99, max(0.02, recall * (0.8 + 0.12 * ability)))
    return timeline


def simulated_learners() -> list[User]:
    """The cohort's accounts, in number order."""
    return list(User.objects.filter(email__endswith=f"@{EMAIL_DOMAIN}").order_by("email"))


def _learners(now: datetime) -> list[User]:
    """The cohort's accounts, created once (no password: nobody logs in as them)."""
    emails = [simulated_email(n) for n in range(1, COHORT_SIZE + 1)]
    existing = set(User.objects.filter(email__in=emails).values_list("email", flat=True))
    new = []
    for number, email in enumerate(emails, start=1):
        if email in existing:
            continue
        user = User(
            email=email,
            display_name=f"Simulated learner {number:02d}",
            reminders_enabled=False,
            date_joined=now,
        )
        user.set_unusable_password()
        new.append(user)
    User.objects.bulk_create(new)
    by_email = {u.email: u for u in User.objects.filter(email__in=emails)}
    return [by_email[e] for e in emails]


def _course_items(course: Course) -> list[QuizItem]:
    return list(
        QuizItem.objects.filter(lesson__module__course=course)
        .select_related("lesson__module")
        .prefetch_related("choices")
        .order_by("lesson__module__position", "lesson__position", "position", "id")
    )


def _expected_answers(items: list[QuizItem]) -> dict[int, float]:
    """One draw's answer per calculated item: the typed numbers are simulated around it."""
    answers = {}
    for item in items:
        if item.kind == QuizItem.Kind.CALCULATED:
            answers[item.pk] = problem_for(item, learner_id=0, review=0).solution.answer
    return answers


def _learner_plan(
    rng: random.Random, lessons: list[int], now: datetime
) -> tuple[float, datetime, int, float]:
    """Ability, start, lessons taken (most finish; some stop early) and days per lesson."""
    ability = rng.gauss(0.3, 1.0)
    start = now - timedelta(days=rng.uniform(45, 150), hours=rng.uniform(0, 23))
    taken = len(lessons) if rng.random() < 0.8 else rng.randint(2, max(2, len(lessons) - 1))
    return ability, start, taken, rng.uniform(1.0, 5.0)


def cohort_course_seed(*, course: Course, learners: list[User], now: datetime) -> int:
    """Each simulated learner's history in one course, unless they already have one. Returns
    the review logs written."""
    started = set(
        RecallSchedule.objects.filter(course=course, learner__in=learners).values_list(
            "learner_id", flat=True
        )
    )
    todo = [u for u in learners if u.pk not in started]
    if not todo:
        return 0
    Enrollment.objects.bulk_create(
        [Enrollment(course=course, user=u, role=Enrollment.Role.LEARNER) for u in todo],
        ignore_conflicts=True,
    )
    items = _course_items(course)
    lessons = list(dict.fromkeys(i.lesson_id for i in items))
    expected = _expected_answers(items)
    miskeyed = _miskeyed(items)
    implausible = implausible_item(items, miskeyed=miskeyed)
    scheduler = fsrs_adapter.scheduler_for(course)
    planned: list[tuple[User, QuizItem, Timeline]] = []
    for user in todo:
        rng = random.Random(f"{SEED}:{course.slug}:{user.email}")
        ability, start, taken, pace = _learner_plan(rng, lessons, now)
        for item in items:
            index = lessons.index(item.lesson_id)
            if index >= taken:
                continue
            first_at = start + timedelta(days=index * pace, minutes=rng.uniform(1, 50))
            if first_at >= now:
                continue
            logit = ability - _difficulty(item)
            if item.pk == miskeyed:
                logit = -logit
            right = rng.random() < 1 / (1 + math.exp(-logit))
            timeline = _simulate(
                rng=rng,
                scheduler=scheduler,
                first_at=first_at,
                first_right=right,
                ability=ability,
                expected=expected.get(item.pk),
                now=now,
            )
            if timeline.logs:
                # A stream of its own: the reviews' draws stay as they were before choices.
                picks = random.Random(f"{SEED}:choices:{user.email}:{item.key}")
                timeline.logs[0]["choice_keys"] = picked_choices(
                    item, right=right, rng=picks, miskeyed=item.pk == miskeyed,
                    implausible=item.pk == implausible,
                )  # fmt: skip
            planned.append((user, item, timeline))
    return _cohort_write(course=course, planned=planned)


def _cohort_write(*, course: Course, planned: list[tuple[User, QuizItem, Timeline]]) -> int:
    schedules = []
    for user, item, timeline in planned:
        schedule = RecallSchedule(
            learner=user, item=item, course=course, reps=timeline.reps, lapses=timeline.lapses
        )
        fsrs_adapter.card_to_schedule(timeline.card, schedule)
        schedules.append(schedule)
    RecallSchedule.objects.bulk_create(schedules, batch_size=2000)
    logs = [
        ReviewLog(
            schedule=schedule,
            learner_id=schedule.learner_id,
            item_id=schedule.item_id,
            idempotency_key=uuid.uuid4(),
            desired_retention=course.desired_retention,
            **row,
        )
        for schedule, (_u, _i, timeline) in zip(schedules, planned, strict=True)
        for row in timeline.logs
    ]
    ReviewLog.objects.bulk_create(logs, batch_size=5000)
    # The rollups count logs after their watermark: these are backdated, so rebuild them.
    ReviewRollupWatermark.objects.update(rolled_up_to=None)
    return len(logs)


def demo_cohort_seed(*, now: datetime) -> tuple[int, int]:
    """The simulated cohort in every course: (learners, review logs written)."""
    learners = _learners(now)
    written = sum(
        cohort_course_seed(course=course, learners=learners, now=now)
        for course in Course.objects.order_by("pk")
    )
    return len(learners), written
