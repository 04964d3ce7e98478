"""The automatic check's reading of an attached load test: each target the run missed, a run
below the plan's peak, and an engine far more optimistic than the run."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

# (code, severity, message): the check turns each into one of its findings.
MeasuredFinding = tuple[str, str, str]


def _peak(content: dict[str, Any]) -> float | None:
    try:
        return float(content["concurrency"])
    except (KeyError, TypeError, ValueError):
        return None


# Beyond this factor the engine's promise was far from the run (the speed model's own goal is
# ±25 % on decode and 2x on the first token: docs/speed-model.md): the grader should see it.
OPTIMISTIC_FACTOR = 1.5
MEASURED_LABELS = {
    "ttft_ms": "time to first token",
    "itl_ms": "time between tokens",
    "output_tokens_per_s": "output throughput",
    "ttft_target_ms": "time to first token",
    "time_per_output_token_ms": "time per output token",
}


def measured_findings(content: dict[str, Any], measured: dict[str, Any]) -> list[MeasuredFinding]:
    """What the attached load test says about the plan: each target it missed (an error), a run
    below the plan's peak concurrency, an engine far more optimistic than the run (warnings)."""
    findings: list[MeasuredFinding] = []
    for target in measured.get("targets") or []:
        if target.get("meets"):
            continue
        message = _(
            "The load test misses the plan's target: %(stat)s %(what)s %(measured)s ms, over "
            "the %(limit)s ms the plan needs."
        ) % {
            "stat": target.get("statistic"),
            "what": MEASURED_LABELS.get(str(target.get("target")), target.get("target")),
            "measured": f"{target.get('measured') or 0:,.0f}",
            "limit": f"{target.get('limit') or 0:,.0f}",
        }
        findings.append(("measured_misses_target", "error", message))
    peak = _peak(content)
    ran = (measured.get("predicted") or {}).get("concurrency")
    if peak is not None and isinstance(ran, int) and ran < peak:
        message = _(
            "The load test kept %(ran)d requests in flight, below the plan's peak of %(peak)d: "
            "it does not show the peak. Run it again at the peak concurrency."
        ) % {"ran": ran, "peak": int(peak)}
        findings.append(("measured_below_peak", "warning", message))
    gap = measured.get("largest_gap") or {}
    ratio = gap.get("ratio")
    if gap.get("optimistic") and isinstance(ratio, int | float) and ratio > 0:
        factor = ratio if ratio >= 1 else 1 / ratio
        if factor >= OPTIMISTIC_FACTOR:
            message = _(
                "The calculator was optimistic about %(what)s: the run was %(factor)s× worse "
                "than predicted. Likely: %(causes)s"
            ) % {
                "what": MEASURED_LABELS.get(str(gap.get("metric")), gap.get("metric")),
                "factor": f"{factor:.1f}",
                "causes": " ".join(gap.get("likely_causes") or []),
            }
            findings.append(("engine_optimistic", "warning", message))
    return findings
