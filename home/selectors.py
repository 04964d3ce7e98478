"""What an instructor's home shows: plans waiting to be graded, the claims they hold, the items
where learners struggle, and how today's digests went. Read from several apps, so it lives at the
top."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q

from accounts.models import User
from courses.selectors import courses_taught_only
from planner.capstone.grading_selectors import grading_queue, queue_counts
from planner.models import CapstoneSubmission, GradingClaim
from quizzes.models import QuizItem
from quizzes.selectors.rollups import item_totals, rolled_up_to
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


def _struggling_items(*, user: User, course_ids: list[int]) -> list[StrugglingItem]:
    """Items of the taught courses with the highest share of Again among kept reviews, from the
    review rollup and the logs since its watermark. Three queries."""
    totals = item_totals(
        items=Q(item__lesson__module__course_id__in=course_ids), mark=rolled_up_to()
    )
    ranked = sorted(
        (
            (item_id, t.reviews, t.again)
            for item_id, t in totals.items()
            if t.reviews >= STRUGGLING_MIN_REVIEWS and t.again > 0
        ),
        key=lambda row: (-row[2] / row[1], -row[1]),
    )[:STRUGGLING_SHOWN]
    found = {item_id: (n, again) for item_id, n, again in ranked}
    items = QuizItem.objects.filter(pk__in=found).select_related("lesson__module__course")
    return sorted(
        (
            StrugglingItem(item=item, reviews=found[item.pk][0], again=found[item.pk][1])
            for item in items
        ),
        key=lambda s: (-s.again_rate, -s.reviews),
    )


def instructor_home_for(*, user: User, now: datetime) -> InstructorHome:
    """Ten queries, whatever the number of courses, plans, learners or reviews: the plans
    waiting are a page of the queue's (course, submitted_at) index and their count comes from
    the grades and claims; the struggling items from the review rollup."""
    course_ids = list(courses_taught_only(user=user).values_list("pk", flat=True))
    waiting = grading_queue(user=user, now=now, status="ungraded", course_ids=course_ids).exclude(
        learner=user
    )
    start, end = utc_day_bounds(now=now)
    counts = queue_counts(course_ids=course_ids, now=now, exclude_learner=user)
    return InstructorHome(
        waiting=[
            WaitingPlan(submission=s, age=now - s.submitted_at) for s in waiting[:WAITING_SHOWN]
        ],
        waiting_total=counts["ungraded"],
        claims=list(
            GradingClaim.objects.filter(grader=user, expires_at__gt=now)
            .select_related("submission__learner", "submission__course")
            .order_by("expires_at")
        ),
        struggling=_struggling_items(user=user, course_ids=course_ids),
        digests=digest_counts(start=start, end=end, digests=digests_visible_to(user=user)),
    )
