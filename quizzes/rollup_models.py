"""Maintained aggregates of the review log, kept by the periodic rollup (services/rollup.py):
per item per UTC day, per learner per learning day, each item's schedule counts, and the
watermark up to which they are complete; and a course's skills and its stored item analysis
(the nightly job's, services/item_analysis.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

__all__ = [
    "CourseSkill",
    "ItemAnalysis",
    "ItemDayRollup",
    "ItemScheduleCounts",
    "LearnerDayRollup",
    "ReviewRollupWatermark",
]


class ReviewRollupWatermark(models.Model):
    """One row: every rollup row counts exactly the kept review logs before `rolled_up_to`
    (null: the rollup has never run, and readers count from the logs themselves)."""

    rolled_up_to = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"review rollups up to {self.rolled_up_to}"


class ItemDayRollup(models.Model):
    """The kept reviews of one quiz item on one UTC day. A module's or a course's figures are
    sums over its items' rows, so an item moved to another module takes its reviews along."""

    item = models.ForeignKey("quizzes.QuizItem", models.CASCADE, "+", db_index=False)
    day = models.DateField()
    reviews = models.PositiveIntegerField()
    again = models.PositiveIntegerField()
    duration_ms_sum = models.BigIntegerField()
    duration_count = models.PositiveIntegerField()
    # Reviews of cards in Review state, and how many of them passed (the retention figures).
    review_state_reviews = models.PositiveIntegerField()
    review_state_passed = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "day"], name="itemdayrollup_unique_day"),
        ]
        # The rollup deletes and recomputes its window of days by day.
        indexes = [models.Index(fields=["day"], name="itemdayrollup_day")]

    def __str__(self) -> str:
        return f"item {self.item_id} on {self.day}: {self.reviews} reviews"


class LearnerDayRollup(models.Model):
    """One learner's kept reviews on one of their learning days (in the zone and day-start hour
    they had when the day was rolled up): the streak, the mature reviews and the weekly rate."""

    learner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, "+", db_index=False)
    day = models.DateField()
    reviews = models.PositiveIntegerField()
    review_state_reviews = models.PositiveIntegerField()
    review_state_passed = models.PositiveIntegerField()
    mature_reviews = models.PositiveIntegerField()
    mature_passed = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "day"], name="learnerdayrollup_unique_day"),
        ]
        indexes = [models.Index(fields=["day"], name="learnerdayrollup_day")]

    def __str__(self) -> str:
        return f"learner {self.learner_id} on {self.day}: {self.reviews} reviews"


class ItemScheduleCounts(models.Model):
    """How many learners have a recall schedule of the item, and how many of them are leeches,
    as counted by the last rollup."""

    item = models.OneToOneField(
        "quizzes.QuizItem", models.CASCADE, related_name="+", primary_key=True
    )
    learners = models.PositiveIntegerField()
    leeches = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"item {self.item_id}: {self.learners} learners, {self.leeches} leeches"


class CourseSkill(models.Model):
    """One skill of a course's list; quiz items name theirs in `QuizItem.skills`."""

    course = models.ForeignKey("courses.Course", models.CASCADE, "skills")
    slug = models.SlugField(max_length=60)
    title = models.CharField(max_length=120)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["course", "position"]
        constraints = [
            models.UniqueConstraint(fields=["course", "slug"], name="courseskill_unique_slug")
        ]

    def __str__(self) -> str:
        return f"{self.course_id}: {self.title}"


class ItemAnalysis(models.Model):
    """The latest item analysis of one course, as the nightly job computed it: the instructor
    page and `manage.py item_analysis` read it; nothing on a page scans the review log."""

    course = models.OneToOneField("courses.Course", models.CASCADE, related_name="item_analysis")
    computed_at = models.DateTimeField()
    learners = models.PositiveIntegerField(default=0)
    responses = models.PositiveIntegerField(default=0)
    # The JSON `manage.py item_analysis --json` prints: method, thresholds and one row per item.
    report = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"item analysis of {self.course_id} at {self.computed_at:%Y-%m-%d %H:%M}"
