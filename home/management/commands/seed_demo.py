"""Create the demo learner and demo instructor, enrol them, give the learner recall to do, and
add a simulated cohort with months of history (home/services/demo_cohort.py) so every
instructor page has data; then compute each course's item analysis."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from accounts.services import user_create_verified
from courses.models import Course, Enrollment
from home.services.demo_capstone import demo_capstone_plans
from home.services.demo_cohort import EMAIL_DOMAIN, demo_cohort_seed, simulated_learners
from quizzes.models import QuizItem, RecallSchedule
from quizzes.services.answers import ItemResponse, item_answer
from quizzes.services.item_analysis import item_analysis_refresh

DEMO_PASSWORD = "demo-password-123"
DEMO_LEARNER = "learner@demo.local"
DEMO_INSTRUCTOR = "instructor@demo.local"
# Per course: the learner is enrolled in every course, and recall is due in each of them.
DEMO_ANSWERED_ITEMS = 3


class Command(BaseCommand):
    help = (
        "Create (or reset) the demo learner and instructor, enrol them in every course, and have the "
        "learner answer a few first-lesson items of each course two days ago so recall is due now."
    )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        learner = user_create_verified(
            email=DEMO_LEARNER, password=DEMO_PASSWORD, display_name="Demo Learner"
        )
        # The demo digest should not wait for 08:00: it is due from the start of the learner's day.
        learner.reminder_hour = learner.day_start_hour
        learner.save(update_fields=["reminder_hour"])
        instructor = user_create_verified(
            email=DEMO_INSTRUCTOR,
            password=DEMO_PASSWORD,
            display_name="Demo Instructor",
            instructor=True,
        )
        for course in Course.objects.all():
            Enrollment.objects.get_or_create(
                course=course, user=learner, defaults={"role": Enrollment.Role.LEARNER}
            )
            Enrollment.objects.update_or_create(
                course=course, user=instructor, defaults={"role": Enrollment.Role.INSTRUCTOR}
            )
        answered = self._answer_first_items(learner)
        now = timezone.now()
        cohort, logs = demo_cohort_seed(now=now)
        plans = sum(
            demo_capstone_plans(course=course, learners=simulated_learners(), now=now)
            for course in Course.objects.filter(rubric__isnull=False)
        )
        for course in Course.objects.all():
            item_analysis_refresh(course=course, now=now)
        courses = Course.objects.count()
        self.stdout.write(self.style.SUCCESS(f"Demo logins (password for both: {DEMO_PASSWORD})"))
        self.stdout.write(
            f"  learner:    {DEMO_LEARNER}  ({answered} recall items due now, "
            f"enrolled in {courses} course{'s' if courses != 1 else ''})"
        )
        self.stdout.write(f"  instructor: {DEMO_INSTRUCTOR}")
        self.stdout.write(
            f"  simulated cohort: {cohort} learners (*@{EMAIL_DOMAIN}, no login), "
            f"{logs} review logs and {plans} capstone plans added this run"
        )

    def _answer_first_items(self, learner: Any) -> int:
        """Once per learner and course: answer a few of the course's first items as of two days
        ago, so their reviews are due now (a course added later gets its own on the next run)."""
        answered_at = timezone.now() - timedelta(days=2)
        started = RecallSchedule.objects.filter(learner=learner).values("course_id")
        for course in Course.objects.filter(enrollments__user=learner).exclude(pk__in=started):
            self._answer_items(learner, course, answered_at)
        return RecallSchedule.objects.filter(learner=learner, due__lte=timezone.now()).count()

    def _answer_items(self, learner: Any, course: Course, answered_at: Any) -> None:
        items = (
            QuizItem.objects.filter(lesson__module__course=course)
            # Answered as the demo learner would: a choice or a self-rating, never a number.
            .exclude(kind__in=[QuizItem.Kind.NUMERIC, QuizItem.Kind.CALCULATED])
            .prefetch_related("choices")
            .order_by("lesson__module__position", "lesson__position", "position")[
                :DEMO_ANSWERED_ITEMS
            ]
        )
        for item in items:
            if item.kind == QuizItem.Kind.MULTIPLE_CHOICE:
                keys = frozenset(c.key for c in item.choices.all() if c.is_correct)
                response = ItemResponse(choice_keys=keys)
            else:
                response = ItemResponse(self_rating=3)
            item_answer(learner=learner, item=item, response=response, now=answered_at)
