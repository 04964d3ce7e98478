"""A course's skills (from its content files) and its stored item analysis (a nightly job)."""

from __future__ import annotations

from django.db import models

__all__ = ["CourseSkill", "ItemAnalysis"]


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
