"""Quiz items, each learner's recall schedule for them, and the review log."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from courses.models import Lesson


class QuizItem(models.Model):
    class Kind(models.TextChoices):
        MULTIPLE_CHOICE = "multiple_choice", _("Multiple choice")
        NUMERIC = "numeric", _("Numeric")
        FREE_RECALL = "free_recall", _("Free recall")
        CALCULATED = "calculated", _("Calculated")

    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="quiz_items")
    # Stable key from the content files: re-imports update by key and keep recall schedules.
    key = models.SlugField(max_length=100)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    position = models.PositiveIntegerField(default=0)
    prompt = models.TextField()
    explanation = models.TextField(blank=True, help_text=_("Shown after answering."))
    # Numeric items.
    expected_value = models.FloatField(null=True, blank=True)
    unit = models.CharField(max_length=40, blank=True)
    tolerance = models.FloatField(default=0.0, help_text=_("Absolute tolerance, in the unit."))
    # Free-recall items.
    model_answer = models.TextField(blank=True)
    # Calculated items: exercise, variables, relative_tolerance, answer_range (calculated.py).
    calculation = models.JSONField(default=dict, blank=True)
    skills = models.JSONField(default=list, blank=True, help_text=_("Its CourseSkill slugs."))

    class Meta:
        ordering = ["lesson", "position"]
        constraints = [
            models.UniqueConstraint(fields=["lesson", "key"], name="quizitem_unique_key_per_lesson")
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.prompt[:60]}"

    @property
    def single_answer(self) -> bool:
        """Multiple choice with one correct choice (radios); a prefetch of choices serves it."""
        return sum(1 for choice in self.choices.all() if choice.is_correct) == 1


class Choice(models.Model):
    item = models.ForeignKey(QuizItem, on_delete=models.CASCADE, related_name="choices")
    key = models.SlugField(max_length=40)
    position = models.PositiveIntegerField(default=0)
    text = models.TextField()
    is_correct = models.BooleanField(default=False)
    # Why this choice is right or, for a distractor, why it is wrong.
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["item", "position"]
        constraints = [
            models.UniqueConstraint(fields=["item", "key"], name="choice_unique_key_per_item")
        ]

    def __str__(self) -> str:
        return self.text[:60]


class RecallSchedule(models.Model):
    """One learner's memory of one quiz item: the FSRS card state and when it is due."""

    class State(models.IntegerChoices):
        # Values match fsrs.State.
        LEARNING = 1, _("Learning")
        REVIEW = 2, _("Review")
        RELEARNING = 3, _("Relearning")

    # No single-column index on learner: (learner, due) and (learner, item) both lead with it,
    # and a third index only tempts the planner away from (learner, due) for the due count.
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.CASCADE, "recall_schedules", db_index=False
    )
    item = models.ForeignKey(QuizItem, on_delete=models.CASCADE, related_name="recall_schedules")
    # The item's course, kept on the schedule as Anki keeps a card's deck: the due queue counts
    # a learner's schedules per course without joining item, lesson and module. Moved with the
    # item (services/schedule_courses.py). No index: only deleting a course reads by it alone.
    course = models.ForeignKey("courses.Course", models.CASCADE, "+", db_index=False)
    state = models.PositiveSmallIntegerField(choices=State.choices, default=State.LEARNING)
    step = models.PositiveSmallIntegerField(null=True, blank=True)
    stability = models.FloatField(null=True, blank=True)
    difficulty = models.FloatField(null=True, blank=True)
    due = models.DateTimeField()
    last_review = models.DateTimeField(null=True, blank=True)
    reps = models.PositiveIntegerField(default=0)
    lapses = models.PositiveIntegerField(default=0)
    # Idempotency key of the card as last shown: a grade must carry it, and grading rotates it,
    # so a double click, a second tab or a retried request advances the schedule once.
    card_token = models.UUIDField(default=uuid.uuid4)
    # A leech (lapsed again and again) is suspended: out of the queue until brought back; its
    # lapses stay for the item analytics. A database default too, for COPY and raw INSERTs.
    suspended = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "item"], name="schedule_unique_per_item")
        ]
        # The due queue and the reminder scan read (learner, due) and nothing else.
        indexes = [
            models.Index(fields=["learner", "due"], name="schedule_learner_due"),
            models.Index(fields=["due", "learner"], name="schedule_due_learner"),
        ]

    def __str__(self) -> str:
        return f"{self.learner} · {self.item.key} due {self.due:%Y-%m-%d %H:%M}"


class ReviewLog(models.Model):
    """One review of one recall schedule. Append-only: written once, never updated."""

    class Rating(models.IntegerChoices):
        AGAIN = 1, _("Again")
        HARD = 2, _("Hard")
        GOOD = 3, _("Good")
        EASY = 4, _("Easy")

    class Source(models.TextChoices):
        LESSON = "lesson", _("Lesson")
        REVIEW = "review", _("Review session")
        EMAIL = "email", _("Email prompt")

    # No index of their own (migration 0008). Learner and item copy the schedule's, whose
    # constraints hold them: no constraint check, a row lock on each, per grade (0.12 ms).
    schedule = models.ForeignKey(RecallSchedule, models.CASCADE, "logs", db_index=False)
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.CASCADE, "review_logs", db_index=False, db_constraint=False
    )
    item = models.ForeignKey(
        QuizItem, models.CASCADE, "review_logs", db_index=False, db_constraint=False
    )
    rating = models.PositiveSmallIntegerField(choices=Rating.choices)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.REVIEW)
    reviewed_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # Days the card had been scheduled for when it was reviewed (0 unless it was in Review):
    # true retention reads the mature reviews (>= 21 days) from it without parsing JSON.
    scheduled_days = models.PositiveIntegerField(default=0)
    # The card token the grade was made against; unique per schedule, so a replay is rejected.
    idempotency_key = models.UUIDField()
    state_before = models.JSONField()
    state_after = models.JSONField()
    # What scheduled it: the parameter set (null: FSRS-6's defaults; RESTRICT: a set goes only
    # with its logs) and the desired retention (null only on rows written before it was kept).
    parameters = models.ForeignKey(
        "FsrsParameters", models.RESTRICT, "review_logs", null=True, blank=True
    )
    desired_retention = models.FloatField(null=True, blank=True)
    # A calculated item's typed number and its drawn problem's answer (null if none typed).
    answer_value = models.FloatField(null=True, blank=True)
    expected_value = models.FloatField(null=True, blank=True)
    # A choice item's answer in a lesson: the keys picked, sorted (null where none was recorded).
    choice_keys = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["reviewed_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["schedule", "idempotency_key"], name="reviewlog_unique_idempotency_key"
            )
        ]
        indexes = [
            models.Index(fields=["learner", "reviewed_at"], name="reviewlog_learner_time"),
            models.Index(fields=["item", "reviewed_at"], name="reviewlog_item_time"),
        ]

    def __str__(self) -> str:
        return f"{self.learner} rated {self.item.key} {self.rating} at {self.reviewed_at:%Y-%m-%d %H:%M}"


class ReviewUndo(models.Model):
    """The record that a learner undid one grade: the schedule went back to the log's state_before.
    The review log itself stays as written; statistics skip logs that have an undo."""

    log = models.OneToOneField(ReviewLog, on_delete=models.CASCADE, related_name="undo")
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_undos"
    )
    undone_at = models.DateTimeField()

    class Meta:
        ordering = ["-undone_at"]

    def __str__(self) -> str:
        return f"{self.learner} undid review {self.log_id} at {self.undone_at:%Y-%m-%d %H:%M}"


class FsrsParameters(models.Model):
    """One versioned set of FSRS-6 weights for a course (pooled, learner null) or for one learner
    in a course, with the held-out scores that decided its fate. Written once: only `status`
    (and `activated_at`) ever change, so every review log row can say which set scheduled it."""

    class Status(models.TextChoices):
        CANDIDATE = "candidate", _("Candidate")
        ACTIVE = "active", _("Active")
        REJECTED = "rejected", _("Rejected")
        RETIRED = "retired", _("Retired")

    course = models.ForeignKey(
        "courses.Course", on_delete=models.CASCADE, related_name="fsrs_parameters"
    )
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.CASCADE, "fsrs_parameters", null=True, blank=True
    )
    version = models.PositiveIntegerField()
    weights = models.JSONField()
    library = models.CharField(max_length=40)
    library_version = models.CharField(max_length=20)
    trained_at = models.DateTimeField()
    # Reviews before the cut-off trained the set; long-term reviews after it scored it.
    cutoff = models.DateTimeField()
    review_count = models.PositiveIntegerField()
    train_long_term_count = models.PositiveIntegerField()
    heldout_count = models.PositiveIntegerField()
    # Held-out log loss, RMSE (bins) and calibration (mean predicted minus observed recall) of
    # FSRS-6's defaults, of the set active when this one was trained, and of this one.
    defaults_log_loss = models.FloatField(null=True, blank=True)
    defaults_rmse = models.FloatField(null=True, blank=True)
    defaults_calibration = models.FloatField(null=True, blank=True)
    active_log_loss = models.FloatField(null=True, blank=True)
    active_rmse = models.FloatField(null=True, blank=True)
    active_calibration = models.FloatField(null=True, blank=True)
    candidate_log_loss = models.FloatField(null=True, blank=True)
    candidate_rmse = models.FloatField(null=True, blank=True)
    candidate_calibration = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.CANDIDATE)
    reason = models.CharField(max_length=200, blank=True)
    activated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["course", "learner", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["course", "version"],
                condition=models.Q(learner__isnull=True),
                name="fsrsparameters_unique_pooled_version",
            ),
            models.UniqueConstraint(
                fields=["course", "learner", "version"],
                condition=models.Q(learner__isnull=False),
                name="fsrsparameters_unique_personal_version",
            ),
            models.UniqueConstraint(
                fields=["course"],
                condition=models.Q(status="active", learner__isnull=True),
                name="fsrsparameters_one_active_pooled",
            ),
            models.UniqueConstraint(
                fields=["course", "learner"],
                condition=models.Q(status="active", learner__isnull=False),
                name="fsrsparameters_one_active_personal",
            ),
        ]

    def __str__(self) -> str:
        scope = f"learner {self.learner_id}" if self.learner_id else "pooled"
        return f"{self.course_id} {scope} v{self.version} ({self.status})"


class RetentionPreference(models.Model):
    """A learner's own desired retention in one course, within the course's bounds."""

    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="retention_preferences"
    )
    course = models.ForeignKey(
        "courses.Course", on_delete=models.CASCADE, related_name="retention_preferences"
    )
    desired_retention = models.FloatField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["learner", "course"], name="retentionpreference_unique_per_course"
            ),
            models.CheckConstraint(
                condition=models.Q(desired_retention__gte=0.8, desired_retention__lte=0.97),
                name="retentionpreference_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.learner} · {self.course_id}: {self.desired_retention:.2f}"


from quizzes.rollup_models import *  # noqa: E402,F403  (rollups, item analysis, skills)
