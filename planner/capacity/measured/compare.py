"""Measured beside predicted: the run's configuration drives the engine's prediction for the same
run, then each metric's ratio (measured ÷ predicted), the largest gap first, and its likely causes
in plain words from what the file shows.

The prediction is planner.capacity.measured.predict's, the causes planner.capacity.measured.causes'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Final

from planner.capacity.measured.causes import METRICS, Cause, likely_causes
from planner.capacity.measured.predict import Prediction, predict_run
from planner.capacity.measured.run import Distribution, MeasuredRun
from planner.capacity.serving import ServingEstimate, ServingInputs

# A gap beyond this factor with no other cause read from the file points at the engine or its
# settings (the speed model's goal is ±25 % on decode and 2x on the first token: docs/speed-model.md).
ENGINE_GAP: Final = 1.5
LABELS: Final = {
    "ttft_ms": "Time to first token (ms, mean)",
    "itl_ms": "Time between tokens (ms, mean)",
    "output_tokens_per_s": "Output throughput (tokens/s)",
}


@dataclass(frozen=True, slots=True)
class Gap:
    metric: str
    measured: float
    predicted: float
    ratio: float
    optimistic: bool  # the engine promised better than the run got
    likely_causes: tuple[str, ...]

    @property
    def size(self) -> float:
        return abs(math.log(self.ratio)) if self.ratio > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "label": LABELS[self.metric],
            "measured": self.measured,
            "predicted": self.predicted,
            "ratio": self.ratio,
            "optimistic": self.optimistic,
            "likely_causes": list(self.likely_causes),
        }


@dataclass(frozen=True, slots=True)
class TargetCheck:
    target: str
    limit: float
    measured: float
    statistic: str  # "p95", "p99" or "mean": the file's figure compared
    meets: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "limit": self.limit,
            "measured": self.measured,
            "statistic": self.statistic,
            "meets": self.meets,
        }


@dataclass(frozen=True, slots=True)
class MeasuredComparison:
    run: MeasuredRun
    predicted: Prediction
    gaps: list[Gap]
    causes: list[Cause]
    targets: list[TargetCheck] = field(default_factory=list)

    @property
    def ratios(self) -> dict[str, float | None]:
        by_metric = {g.metric: g.ratio for g in self.gaps}
        return {m: by_metric.get(m) for m in METRICS}

    @property
    def largest_gap(self) -> Gap | None:
        return self.gaps[0] if self.gaps else None

    @property
    def targets_missed(self) -> list[TargetCheck]:
        return [t for t in self.targets if not t.meets]

    def to_dict(self) -> dict[str, Any]:
        """The JSON of the CLI (`capacity measured --json`) and the API; the keys are a contract."""
        gap = self.largest_gap
        return {
            "measured": self.run.to_dict(),
            "predicted": self.predicted.to_dict(),
            "ratios": self.ratios,
            "largest_gap": (
                {
                    "metric": gap.metric,
                    "ratio": gap.ratio,
                    "optimistic": gap.optimistic,
                    "likely_causes": list(gap.likely_causes),
                }
                if gap
                else None
            ),
            "gaps": [g.to_dict() for g in self.gaps],
            "causes": [{"code": c.code, "text": c.text} for c in self.causes],
            "targets": [t.to_dict() for t in self.targets],
            "notes": list(self.run.notes),
            "warnings": [w.to_dict() for w in self.predicted.estimate.warnings],
            "assumptions": [a.to_dict() for a in self.predicted.estimate.assumptions],
        }


def ratio(measured: float, predicted: float) -> float | None:
    """measured ÷ predicted; None when the prediction is zero."""
    return measured / predicted if predicted > 0 else None


WITHIN: Final = (
    "Within the speed model's usual error (decode ±25 %, first token 2×): nothing in the file "
    "needs explaining."
)


def _engine_fallback(gap: Gap) -> str:
    side = "slower" if gap.optimistic else "faster"
    return (
        f"Nothing in the file explains it: the run was {side} than the speed model predicts. A "
        "different engine version or settings (CUDA graphs, chunked prefill, the attention "
        "backend) or another GPU clock than the model's calibration are the usual causes."
    )


def _gaps(run: MeasuredRun, predicted: Prediction, causes: list[Cause]) -> list[Gap]:
    pairs = {
        "ttft_ms": (run.ttft_ms.mean, predicted.ttft_ms),
        "itl_ms": (run.itl_ms.mean, predicted.itl_ms),
        "output_tokens_per_s": (run.output_tokens_per_s, predicted.output_tokens_per_s),
    }
    gaps = []
    for metric, (measured, pred) in pairs.items():
        r = ratio(measured, pred)
        if r is None:
            continue
        optimistic = r < 1 if metric == "output_tokens_per_s" else r > 1
        texts = tuple(c.text for c in causes if metric in c.metrics)
        gap = Gap(metric, measured, pred, r, optimistic, texts)
        if not texts:
            wide = r > ENGINE_GAP or r < 1 / ENGINE_GAP
            gap = replace(gap, likely_causes=(_engine_fallback(gap) if wide else WITHIN,))
        gaps.append(gap)
    return sorted(gaps, key=lambda g: -g.size)


def _statistic(d: Distribution) -> tuple[float, str]:
    for name in ("p95", "p99"):
        value = getattr(d, name)
        if value is not None:
            return value, name
    return d.mean, "mean"


def target_checks(run: MeasuredRun, estimate: ServingEstimate) -> list[TargetCheck]:
    """The plan's targets against the file: the first token against its target, the time between
    tokens against the decode speed the targets need (the load test's pass criteria use p95)."""
    checks = []
    if estimate.ttft_target_ms is not None:
        value, stat = _statistic(run.ttft_ms)
        checks.append(
            TargetCheck(
                "ttft_target_ms",
                estimate.ttft_target_ms,
                value,
                stat,
                value <= estimate.ttft_target_ms,
            )
        )
    need = estimate.required_decode_tokens_per_s
    if need:
        value, stat = _statistic(run.tpot_ms or run.itl_ms)
        limit = 1000 / need
        checks.append(TargetCheck("time_per_output_token_ms", limit, value, stat, value <= limit))
    return checks


def measured_comparison(run: MeasuredRun, base: ServingInputs) -> MeasuredComparison:
    """Predict the run, then set measured beside predicted (largest gap first)."""
    predicted = predict_run(run, base)
    causes = likely_causes(run, predicted)
    return MeasuredComparison(
        run=run,
        predicted=predicted,
        gaps=_gaps(run, predicted, causes),
        causes=causes,
        targets=target_checks(run, predicted.estimate),
    )
