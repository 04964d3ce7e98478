"""What an instructor's home shows: plans waiting to be graded, the claims they hold, the items
where learners struggle, and how today's digests went. Read from several apps, so it lives at the
top."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, F, FloatField, Q
from django.db.models.functions import Cast

from accounts.models import User
from courses.selectors import courses_taught_by
from planner.capstone.grading_selectors import grading_queue
from planner.models import CapstoneSubmission, GradingClaim
from quizzes.models import QuizItem, ReviewLog
from reminders.selectors import DigestCounts, digest_counts, digests_visible_to, utc_day_bounds

WAITING_SHOWN = 8
STRUGGLING_SHOWN = 5
# An again-rate over fewer reviews than this says more about luck than about the item.
STRUGGLING_MIN_REVIEWS = 5


@dataclass(frozen=True)
class WaitingPlan:
    submission: CapstoneSubmission
    age: timedelta


@dataclass(frozen=True)
class StrugglingItem:
    item: QuizItem
    reviews: int
    again: int

    @property
    def again_rate(self) -> float:
        return self.again / self.reviews


@dataclass(frozen=True)
class InstructorHome:
    waiting: list[WaitingPlan]
    waiting_total: int
    claims: list[GradingClaim]
    struggling: list[StrugglingItem]
    digests: DigestCounts


def _struggling_items(*, user: User) -> list[StrugglingItem]:
    """Items of the taught courses with the highest share of Again among kept reviews."""
    rows = (
        ReviewLog.objects.filter(
            undo__isnull=True,
            item__lesson__module__course__in=courses_taught_by(user=user).values("pk"),
        )
        .values("item_id")
        .annotate(n=Count("id"), again=Count("id", filter=Q(rating=ReviewLog.Rating.AGAIN)))
        .filter(n__gte=STRUGGLING_MIN_REVIEWS, again__gt=0)
        .annotate(rate=Cast(F("again"), FloatField()) / Cast(F("n"), FloatField()))
        .order_by("-rate", "-n")[:STRUGGLING_SHOWN]
    )
    found = {row["item_id"]: row for row in rows}
    items = QuizItem.objects.filter(pk__in=found).select_related("lesson__module__course")
    return sorted(
        (
            StrugglingItem(item=item, reviews=found[item.pk]["n"], again=found[item.pk]["again"])
            for item in items
        ),
        key=lambda s: (-s.again_rate, -s.reviews),
    )


def instructor_home_for(*, user: User, now: datetime) -> InstructorHome:
    """Six queries, whatever the number of courses, plans or items."""
    waiting = grading_queue(user=user, now=now, status="ungraded").exclude(learner=user)
    start, end = utc_day_bounds(now=now)
    return InstructorHome(
        waiting=[
            WaitingPlan(submission=s, age=now - s.submitted_at) for s in waiting[:WAITING_SHOWN]
        ],
        waiting_total=waiting.count(),
        claims=list(
            GradingClaim.objects.filter(grader=user, expires_at__gt=now)
            .select_related("submission__learner", "submission__course")
            .order_by("expires_at")
        ),
        struggling=_struggling_items(user=user),
        digests=digest_counts(start=start, end=end, digests=digests_visible_to(user=user)),
    )
