"""The capstone: rubrics (criteria, levels), worksheets, submitted versions, claims and grades."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from courses.models import Course
from planner.cards.models import WorkloadCard


def _unique(name: str, *fields: str) -> models.UniqueConstraint:
    """A unique constraint over the fields, under its migration name."""
    return models.UniqueConstraint(fields=list(fields), name=name)


class Rubric(models.Model):
    course = models.OneToOneField(Course, on_delete=models.CASCADE, related_name="rubric")
    title = models.CharField(max_length=200)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.title


class Criterion(models.Model):
    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="criteria")
    key = models.SlugField(max_length=60)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["rubric", "position"]
        constraints = [_unique("criterion_unique_key_per_rubric", "rubric", "key")]

    def __str__(self) -> str:
        return self.title


class Level(models.Model):
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="levels")
    key = models.SlugField(max_length=60)
    title = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    points = models.PositiveIntegerField()
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["criterion", "position"]
        constraints = [_unique("level_unique_key_per_criterion", "criterion", "key")]

    def __str__(self) -> str:
        return f"{self.title} ({self.points})"


class CapstoneWorksheet(models.Model):
    """One learner's editable draft of the capstone plan for one course (autosaved)."""

    class Recommendation(models.TextChoices):
        CPU = "cpu", _("CPU")
        GPU = "gpu", _("GPU")
        TPU = "tpu", _("TPU or managed accelerator")
        MANAGED_API = "managed_api", _("Managed API")

    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="capstone_worksheets"
    )
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="capstone_worksheets")
    # The plan, in the source's words.
    feature = models.CharField(_("feature"), max_length=200, blank=True)
    user_problem = models.TextField(_("user problem"), blank=True)
    workload_kind = models.CharField(
        _("workload"), max_length=24, choices=WorkloadCard.Kind.choices, blank=True
    )
    model_name = models.CharField(_("model"), max_length=200, blank=True)
    framework = models.CharField(_("framework / serving stack"), max_length=200, blank=True)
    input_size = models.CharField(_("input size"), max_length=200, blank=True)
    output_size = models.CharField(_("output size"), max_length=200, blank=True)
    precision = models.CharField(_("precision"), max_length=40, blank=True)
    latency_target = models.CharField(_("latency target"), max_length=200, blank=True)
    batch_window = models.CharField(_("batch window"), max_length=200, blank=True)
    memory_estimate = models.TextField(_("memory estimate (reasoning)"), blank=True)
    data_source = models.TextField(_("data source and pipeline"), blank=True)
    realistic_input = models.TextField(_("realistic input"), blank=True)
    mechanism = models.TextField(_("mechanism"), blank=True)
    design_choice = models.TextField(_("design choice"), blank=True)
    retry_plan = models.TextField(_("retry plan"), blank=True)
    observability = models.TextField(_("observability fields"), blank=True)
    autoscaling = models.TextField(_("autoscaling behaviour"), blank=True)
    metric = models.TextField(_("metric (utilisation and throughput per dollar)"), blank=True)
    budget = models.CharField(_("budget"), max_length=200, blank=True)
    cost_per_useful_result = models.TextField(_("cost per useful result"), blank=True)
    failure_case = models.TextField(
        _("failure case (fast but memory-bound for the real workload)"), blank=True
    )
    plan_owner = models.CharField(_("owner"), max_length=200, blank=True)
    recommendation = models.CharField(
        _("recommendation"), max_length=16, choices=Recommendation.choices, blank=True
    )
    recommendation_reasons = models.TextField(_("reasons for the recommendation"), blank=True)
    # A path comparison's link (/planner/paths/?...): the check flags a recommendation it rejects.
    paths_query = models.CharField(_("path comparison (its link)"), max_length=2000, blank=True)
    first_load_test = models.TextField(_("first load test to run"), blank=True)
    # The measured page's link (/planner/measured/?gpu=...): the deployment the load test ran on.
    measured_link = models.CharField(
        _("load test's deployment (its link)"), max_length=2000, blank=True
    )
    next_rung = models.TextField(_("next rung"), blank=True)
    # The numbers the automatic check recomputes with the capacity engine.
    gpu_memory_gb = models.FloatField(_("GPU memory (GB)"), null=True, blank=True)
    model_gb = models.FloatField(_("model weights (GB)"), null=True, blank=True)
    params_billion = models.FloatField(_("parameters (billions)"), null=True, blank=True)
    overhead_gb = models.FloatField(_("runtime overhead (GB)"), null=True, blank=True)
    kv_per_user_gb = models.FloatField(_("KV cache per active user (GB)"), null=True, blank=True)
    context_tokens = models.PositiveIntegerField(
        _("context length (tokens)"), null=True, blank=True
    )
    kv_per_token_mb = models.FloatField(_("KV cache per token (MB)"), null=True, blank=True)
    batch_size = models.PositiveIntegerField(_("batch size"), null=True, blank=True)
    concurrency = models.PositiveIntegerField(_("concurrent users (peak)"), null=True, blank=True)
    claimed_max_users = models.PositiveIntegerField(
        _("users your memory estimate says fit"), null=True, blank=True
    )
    workload_cards = models.ManyToManyField(
        WorkloadCard, blank=True, related_name="capstone_worksheets"
    )
    # The capacity engine's result for the plan's numbers, refreshed on every save.
    calculator_result = models.JSONField(default=dict, blank=True)
    # The attached path comparison's result (planner.paths), refreshed when its link changes.
    paths_comparison = models.JSONField(default=dict, blank=True)
    # The attached load test's result beside the engine's prediction (planner.measured).
    measured_comparison = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [_unique("worksheet_unique_per_learner_course", "learner", "course")]

    def __str__(self) -> str:
        return f"{self.learner} · {self.course} worksheet"


class CapstoneSubmission(models.Model):
    """One submitted version of a worksheet. Written once at submit and never updated."""

    worksheet = models.ForeignKey(
        CapstoneWorksheet, on_delete=models.CASCADE, related_name="submissions"
    )
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="capstone_submissions"
    )
    course = models.ForeignKey(
        Course, on_delete=models.CASCADE, related_name="capstone_submissions"
    )
    version = models.PositiveIntegerField()
    # The worksheet's fields as they were at submit (keys: WORKSHEET_FIELDS).
    content = models.JSONField(default=dict)
    # The attached workload cards, copied (name, kind, inputs, result): later edits to a card
    # must not change what was submitted.
    workload_cards = models.JSONField(default=list, blank=True)
    calculator_result = models.JSONField(default=dict, blank=True)
    # The attached path comparison as it was at submit.
    paths_comparison = models.JSONField(default=dict, blank=True)
    # The attached load test's result beside the prediction, as it was at submit.
    measured_comparison = models.JSONField(default=dict, blank=True)
    # The automatic check: disagreements with the engine and missing assumptions.
    check_result = models.JSONField(default=dict, blank=True)
    submitted_at = models.DateTimeField()
    due_at = models.DateTimeField(null=True, blank=True)
    is_late = models.BooleanField(default=False)

    class Meta:
        ordering = ["-submitted_at"]
        constraints = [_unique("submission_unique_version", "learner", "course", "version")]
        indexes = [models.Index(fields=["course", "submitted_at"])]

    def __str__(self) -> str:
        return f"{self.learner} · {self.course} v{self.version}"

    def save(self, *args: object, **kwargs: object) -> None:
        # Immutability is the point of a version: refuse any save after the first.
        if not self._state.adding:
            raise SubmissionImmutableError(f"Submission {self.pk} is immutable.")
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class SubmissionImmutableError(Exception):
    pass


class GradingClaim(models.Model):
    """A grader's time-limited lease on one submission, so two graders never grade it at once."""

    submission = models.OneToOneField(
        CapstoneSubmission, on_delete=models.CASCADE, related_name="claim"
    )
    grader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="grading_claims"
    )
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.submission} claimed by {self.grader} until {self.expires_at:%H:%M}"


class Grade(models.Model):
    """The grade of one submitted version; invisible to the learner until released."""

    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        RELEASED = "released", _("Released")

    class Origin(models.TextChoices):
        INSTRUCTOR = "instructor", _("Instructor")
        PEERS = "peers", _("Peers")

    submission = models.OneToOneField(
        CapstoneSubmission, on_delete=models.CASCADE, related_name="grade"
    )
    grader = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="grades_given"
    )
    # Who graded (the peers: no grader) until an instructor regrades (peer_gradebook.py); the
    # database default too, for inserts by code of a rolling deploy that predates the column.
    origin = models.CharField(
        _("graded by"),
        max_length=10,
        choices=Origin.choices,
        default=Origin.INSTRUCTOR,
        db_default=Origin.INSTRUCTOR,
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    overall_feedback = models.TextField(_("overall feedback"), blank=True)
    # Computed from the chosen levels' points at every save (a snapshot: later rubric edits
    # do not rewrite a grade already given).
    total_points = models.PositiveIntegerField(default=0)
    max_points = models.PositiveIntegerField(default=0)
    released_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["status"])]

    def __str__(self) -> str:
        return f"{self.submission}: {self.total_points}/{self.max_points} ({self.status})"


class CriterionScore(models.Model):
    grade = models.ForeignKey(Grade, on_delete=models.CASCADE, related_name="scores")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="scores")
    level = models.ForeignKey(
        Level, null=True, blank=True, on_delete=models.PROTECT, related_name="scores"
    )
    # The level's points when chosen, so a later rubric edit does not change a given grade.
    points = models.PositiveIntegerField(default=0)
    comment = models.TextField(blank=True)

    class Meta:
        ordering = ["criterion__position"]
        constraints = [_unique("score_unique_per_grade_criterion", "grade", "criterion")]

    def __str__(self) -> str:
        return f"{self.criterion}: {self.level or '—'}"


class GradeChange(models.Model):
    """The audit log of grading actions: who did what to a grade, when, and what changed."""

    class Action(models.TextChoices):
        DRAFT_SAVED = "draft_saved", _("Draft saved")
        RELEASED = "released", _("Released")
        REGRADED = "regraded", _("Regraded after release")
        PEER_GRADED = "peer_graded", _("Graded by peers and released")

    grade = models.ForeignKey(Grade, on_delete=models.CASCADE, related_name="changes")
    # None when the peer step acted (a peer grade written into the gradebook).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="grade_changes",
    )
    action = models.CharField(max_length=16, choices=Action.choices)
    # {"field or criterion key": [before, after]}
    changes = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField()

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        who = self.actor or _("peers")
        return f"{self.get_action_display()} by {who} at {self.at:%Y-%m-%d %H:%M}"
