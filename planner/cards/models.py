"""The workload card: the source's "one card per workload", with its calculator result stored beside it."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class WorkloadCard(models.Model):
    """The source's "one card per workload", with the calculator's result stored beside it."""

    class Kind(models.TextChoices):
        INTERACTIVE_SERVING = "interactive_serving", _("Interactive serving")
        BATCH_INFERENCE = "batch_inference", _("Batch inference")
        TRAINING = "training", _("Training / fine-tuning")

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="workload_cards",
    )
    # Example cards (the source's three) are shown to everyone and owned by no learner.
    is_example = models.BooleanField(default=False)
    slug = models.SlugField(max_length=100, blank=True)
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=24, choices=Kind.choices)
    model_name = models.CharField(max_length=120, blank=True)
    latency_target_ms = models.PositiveIntegerField(null=True, blank=True)
    concurrency = models.PositiveIntegerField(null=True, blank=True)
    batch_window_hours = models.FloatField(null=True, blank=True)
    precision = models.CharField(max_length=16, blank=True)
    notes = models.TextField(blank=True)
    # The calculator's inputs and result as the engine's JSON (same keys as the CLI and API).
    inputs = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-is_example", "name"]
        indexes = [models.Index(fields=["owner", "updated_at"])]

    def __str__(self) -> str:
        return self.name
