"""Prediction against measurement for instructors: across the submitted plans that attach a
load test, how often the calculator was optimistic, and by how much."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from planner.models import CapstoneSubmission

# The measured plans an instructor's summary reads at most (newest first): far more than a
# course's cohort submits, few enough to read in one query.
MEASURED_SUMMARY_LIMIT = 5000
MEASURED_METRICS = (
    ("ttft_ms", _("Time to first token"), False),
    ("itl_ms", _("Time between tokens"), False),
    ("output_tokens_per_s", _("Output throughput"), True),  # higher is better
)


@dataclass(frozen=True, slots=True)
class MeasuredSummaryRow:
    """How often, and by how much, the engine was optimistic about one metric."""

    metric: str
    label: str
    plans: int  # submitted plans with a load test that reports the metric
    optimistic: int  # of them, where the run did worse than predicted
    median_factor: float | None  # among the optimistic: how many times worse (≥ 1)
    worst_factor: float | None

    @property
    def optimistic_share(self) -> float:
        return self.optimistic / self.plans if self.plans else 0.0


def measured_against_predicted(*, course_ids: list[int]) -> list[MeasuredSummaryRow]:
    """Prediction against measurement across the submitted plans (every version) of the courses
    that attach a load test. One query."""
    ratios = list(
        CapstoneSubmission.objects.filter(course_id__in=course_ids)
        .exclude(measured_comparison={})
        .order_by("-submitted_at")
        .values_list("measured_comparison__ratios", flat=True)[:MEASURED_SUMMARY_LIMIT]
    )
    rows = []
    for metric, label, higher_is_better in MEASURED_METRICS:
        values = [
            float(r[metric])
            for r in ratios
            if isinstance(r, dict) and isinstance(r.get(metric), int | float) and r[metric] > 0
        ]
        factors = sorted(
            (1 / v if higher_is_better else v)
            for v in values
            if (v < 1 if higher_is_better else v > 1)
        )
        rows.append(
            MeasuredSummaryRow(
                metric=metric,
                label=str(label),
                plans=len(values),
                optimistic=len(factors),
                median_factor=factors[len(factors) // 2] if factors else None,
                worst_factor=factors[-1] if factors else None,
            )
        )
    return rows
