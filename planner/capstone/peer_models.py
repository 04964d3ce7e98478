"""Peer assessment: a course's peer settings, calibration examples, the plans open to peers and
each assessment (calibration, peer or self) with its levels per criterion."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from courses.models import Course
from planner.capstone.models import CapstoneSubmission, Criterion, Level

# Open edX ORA's peer step defaults to "must grade 5, graded by 3"; Coursera's to 3-5 reviews.
ASSESSORS_PER_PLAN_MAX = 10
CALIBRATION_ATTEMPTS_MAX = 10


class PeerSettings(models.Model):
    """A course's peer step, as its instructors set it."""

    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="peer_settings")
    enabled = models.BooleanField(_("peer assessment on"), default=False)
    assessors_per_plan = models.PositiveSmallIntegerField(
        _("assessors per plan"),
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(ASSESSORS_PER_PLAN_MAX)],
    )
    calibration_attempts = models.PositiveSmallIntegerField(
        _("calibration attempts"),
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(CALIBRATION_ATTEMPTS_MAX)],
    )
    # Plans still lacking assessors at this moment go to the instructors' grading queue.
    deadline = models.DateTimeField(_("peer deadline"), null=True, blank=True)

    class Meta:
        app_label = "planner"

    def __str__(self) -> str:
        return f"{self.course} peer settings"


class CalibrationExample(models.Model):
    """An example plan with its staff levels per criterion and why, for learners to calibrate."""

    course = models.ForeignKey(
        Course, on_delete=models.CASCADE, related_name="calibration_examples"
    )
    title = models.CharField(max_length=200)
    plan = models.TextField(_("the example plan"))
    position = models.PositiveIntegerField(default=0)

    class Meta:
        app_label = "planner"
        ordering = ["course", "position", "pk"]

    def __str__(self) -> str:
        return self.title


class CalibrationStaffLevel(models.Model):
    example = models.ForeignKey(
        CalibrationExample, on_delete=models.CASCADE, related_name="staff_levels"
    )
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="+")
    level = models.ForeignKey(Level, on_delete=models.CASCADE, related_name="+")
    why = models.TextField(_("why"))

    class Meta:
        app_label = "planner"
        constraints = [
            models.UniqueConstraint(
                fields=["example", "criterion"], name="calibration_level_per_criterion"
            )
        ]

    def __str__(self) -> str:
        return f"{self.example}: {self.criterion} = {self.level}"


class PeerPlan(models.Model):
    """A submitted plan open to peers: how many assessors it has, and its peer grade.

    The counters make assignment one indexed read: the plans with the fewest assessors come
    first from (course, state, assigned, id) without counting assessments per request.
    """

    class State(models.TextChoices):
        OPEN = "open", _("Waiting for peers")
        GRADED = "graded", _("Graded by peers")
        FLAGGED = "flagged", _("Flagged for staff")

    submission = models.OneToOneField(
        CapstoneSubmission, on_delete=models.CASCADE, related_name="peer_plan"
    )
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    # Denormalised from the submission, so "never their own" needs no join.
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    assigned = models.PositiveSmallIntegerField(default=0)
    completed = models.PositiveSmallIntegerField(default=0)
    state = models.CharField(max_length=8, choices=State.choices, default=State.OPEN)
    # {"flags": [why, ...], "criteria": {criterion_id: {level_id, level, estimate, sd,
    # confidence}}, "assessors": {assessor_id: {bias, reliability, down_weighted, why}}}
    result = models.JSONField(default=dict, blank=True)
    graded_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    # A run tag of the simulation command: its rows are deleted by it.
    run_tag = models.CharField(max_length=32, blank=True)

    class Meta:
        app_label = "planner"
        indexes = [
            models.Index(fields=["course", "state", "assigned", "id"], name="peer_plan_fewest"),
        ]

    def __str__(self) -> str:
        return f"{self.submission} ({self.state}, {self.completed}/{self.assigned})"


class PeerAssessment(models.Model):
    """One learner's levels for a plan (peer or self) or for a calibration example."""

    class Kind(models.TextChoices):
        CALIBRATION = "calibration", _("Calibration")
        PEER = "peer", _("Peer")
        SELF = "self", _("Self")

    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="peer_assessments"
    )
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    plan = models.ForeignKey(
        PeerPlan, null=True, blank=True, on_delete=models.CASCADE, related_name="assessments"
    )
    example = models.ForeignKey(
        CalibrationExample,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="assessments",
    )
    # A peer assessment's slot on its plan (1..N): the unique (plan, slot) refuses an N+1th.
    slot = models.PositiveSmallIntegerField(null=True, blank=True)
    attempt = models.PositiveSmallIntegerField(default=1)
    # A calibration attempt's outcome: within one level of the staff on every criterion.
    calibration_passed = models.BooleanField(null=True, blank=True)
    comment = models.TextField(_("overall comment"), blank=True, max_length=4000)
    assigned_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "planner"
        constraints = [
            models.UniqueConstraint(
                fields=["plan", "slot"], condition=Q(kind="peer"), name="peer_slot_once"
            ),
            models.UniqueConstraint(
                fields=["assessor", "plan"],
                condition=Q(plan__isnull=False),
                name="peer_plan_once_per_assessor",
            ),
            models.UniqueConstraint(
                fields=["assessor", "course", "attempt"],
                condition=Q(kind="calibration"),
                name="calibration_attempt_once",
            ),
        ]
        indexes = [models.Index(fields=["assessor", "course", "kind"], name="peer_by_assessor")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} by {self.assessor}"


class PeerScore(models.Model):
    assessment = models.ForeignKey(PeerAssessment, on_delete=models.CASCADE, related_name="scores")
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="+")
    level = models.ForeignKey(Level, on_delete=models.CASCADE, related_name="+")
    comment = models.TextField(blank=True, max_length=2000)

    class Meta:
        app_label = "planner"
        constraints = [
            models.UniqueConstraint(
                fields=["assessment", "criterion"], name="peer_score_per_criterion"
            )
        ]

    def __str__(self) -> str:
        return f"{self.criterion}: {self.level}"


class ExpiredPeerAssignment(models.Model):
    """A peer assignment given back after its lease (its row deleted, its slot freed): the id
    is kept so the assessor's link to it says it expired, not that it never was."""

    assessment_id = models.PositiveBigIntegerField(unique=True)
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="+")
    assigned_at = models.DateTimeField()
    expired_at = models.DateTimeField()

    class Meta:
        app_label = "planner"

    def __str__(self) -> str:
        return f"Assignment {self.assessment_id} of {self.assessor}, expired {self.expired_at}"
