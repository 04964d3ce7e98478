"""Courses, their modules and lessons, who is enrolled, and each learner's progress."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from core.bounds import BoundError
from core.ranges import DAILY_NEW_LIMIT, DAILY_REVIEW_LIMIT, MAXIMUM_INTERVAL_DAYS
from core.steps import bounded_steps


def default_learning_steps() -> list[int]:
    """The importer's default learning steps: 1 minute, then 10."""
    return [1, 10]


def default_relearning_steps() -> list[int]:
    """The importer's default relearning step: 10 minutes."""
    return [10]


class Course(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    # Scheduling settings for the course's recall schedules (FSRS-6).
    desired_retention = models.FloatField(
        default=0.9, help_text=_("Probability of recall FSRS aims for, 0.70–0.97.")
    )
    learning_steps_minutes = models.JSONField(
        default=default_learning_steps,
        blank=True,
        help_text=_("Learning steps in minutes, e.g. [1, 10]."),
    )
    relearning_steps_minutes = models.JSONField(default=default_relearning_steps, blank=True)
    maximum_interval_days = models.PositiveIntegerField(default=36500)
    daily_new_limit = models.PositiveIntegerField(default=20)
    daily_review_limit = models.PositiveIntegerField(default=200)
    capstone_due_at = models.DateTimeField(null=True, blank=True)
    # Hash of the imported content folder: a re-import of the same files is a no-op.
    content_hash = models.CharField(max_length=64, blank=True)
    # Fingerprint of the capstone rubric as the last import left it. A rubric that no longer
    # matches it was edited by instructors, and a re-import keeps their version.
    rubric_hash = models.CharField(max_length=64, blank=True, editable=False)
    is_published = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(desired_retention__gte=0.7, desired_retention__lte=0.97),
                name="course_desired_retention_range",
            ),
            # The ranges of core.ranges (MAXIMUM_INTERVAL_DAYS, DAILY_*_LIMIT), held by the
            # database too, so no write path can store a value that breaks a learner's page.
            models.CheckConstraint(
                condition=models.Q(
                    maximum_interval_days__gte=int(MAXIMUM_INTERVAL_DAYS.minimum),
                    maximum_interval_days__lte=int(MAXIMUM_INTERVAL_DAYS.maximum),
                ),
                name="course_maximum_interval_range",
            ),
            models.CheckConstraint(
                condition=models.Q(daily_new_limit__lte=int(DAILY_NEW_LIMIT.maximum)),
                name="course_daily_new_limit_range",
            ),
            models.CheckConstraint(
                condition=models.Q(daily_review_limit__lte=int(DAILY_REVIEW_LIMIT.maximum)),
                name="course_daily_review_limit_range",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("courses:outline", kwargs={"course_slug": self.slug})

    def clean(self) -> None:
        """The step lists, which no check constraint reads inside JSON: the admin's full_clean
        refuses what the settings form refuses (a step of a day or more, nan, 1e12)."""
        errors: dict[str, list[str]] = {}
        for field in ("learning_steps_minutes", "relearning_steps_minutes"):
            try:
                bounded_steps(getattr(self, field), field=field)
            except BoundError as exc:
                errors[field] = [exc.message]
        if errors:
            raise ValidationError(errors)


class Module(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="modules")
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["course", "position"]
        constraints = [
            models.UniqueConstraint(fields=["course", "slug"], name="module_unique_slug_per_course")
        ]

    def __str__(self) -> str:
        return self.title


class Lesson(models.Model):
    module = models.ForeignKey(Module, on_delete=models.CASCADE, related_name="lessons")
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)
    objective = models.TextField(help_text=_("Why this matters: the learning objective."))
    decision = models.TextField(blank=True, help_text=_("The decision this lesson forces, if any."))
    body_markdown = models.TextField()
    # Rendered once at import (or on admin save) and sanitised with nh3.
    body_html = models.TextField(blank=True)
    estimated_minutes = models.PositiveIntegerField(default=10)

    class Meta:
        ordering = ["module__position", "position"]
        constraints = [
            models.UniqueConstraint(fields=["module", "slug"], name="lesson_unique_slug_per_module")
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse(
            "courses:lesson",
            kwargs={"course_slug": self.module.course.slug, "lesson_slug": self.slug},
        )


class Enrollment(models.Model):
    class Role(models.TextChoices):
        LEARNER = "learner", _("Learner")
        INSTRUCTOR = "instructor", _("Instructor")

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="enrollments")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="enrollments"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.LEARNER)
    enrolled_at = models.DateTimeField(auto_now_add=True)
    last_lesson = models.ForeignKey(
        Lesson, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["course", "enrolled_at"]
        constraints = [
            models.UniqueConstraint(fields=["course", "user"], name="enrollment_unique_per_course")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.course} ({self.role})"


class LessonProgress(models.Model):
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="progress")
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lesson_progress"
    )
    started_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lesson", "learner"], name="progress_unique_per_lesson")
        ]
        indexes = [models.Index(fields=["learner", "lesson"])]

    def __str__(self) -> str:
        return f"{self.learner} · {self.lesson}"
