"""The capstone's automatic check: recompute a plan's memory numbers with the capacity engine.

It lists where the plan's own numbers disagree with the engine (weights that leave no room for KV
cache, a stated concurrency its memory cannot hold, more users claimed than fit, weights that do
not match parameters × precision), a recommendation its attached path comparison rejects, and which of the assumptions the source says good advice must
name are missing. The engine (planner.capacity) does the arithmetic; this module only maps the
worksheet onto its inputs and compares.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from django.utils.translation import gettext as _

from planner.calculator.runs import calculation_run
from planner.capacity import CapacityInputError, ServingEstimate, checkpoint_size_range
from planner.capacity.paths.label import recommendation_label
from planner.capstone.comparison_label import PATH_NAMES, PATH_WORDS, money, recommended_label
from planner.capstone.measured_check import measured_findings

# The source: "Good advice names workload, framework, model size, precision, context length,
# batch size, concurrency, latency target, data pipeline, autoscaling behavior, and budget."
# An assumption is named when any of the worksheet fields beside it is filled.
ASSUMPTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("workload", ("workload_kind",)),
    ("framework", ("framework",)),
    ("model size", ("model_gb", "params_billion")),
    ("precision", ("precision",)),
    ("context length", ("context_tokens",)),
    ("batch size", ("batch_size",)),
    ("concurrency", ("concurrency",)),
    ("latency target", ("latency_target",)),
    ("data pipeline", ("data_source",)),
    ("autoscaling behaviour", ("autoscaling",)),
    ("budget", ("budget",)),
)

# Free-text precision (as learners write it) to the engine's precision names; first match wins.
PRECISION_NAMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"int\s*4|q4|4[- ]?bit|nf4|awq|gptq", re.I), "int4"),
    (re.compile(r"int\s*8|q8|8[- ]?bit", re.I), "int8"),
    (re.compile(r"fp\s*8|float\s*8", re.I), "fp8"),
    (re.compile(r"bf\s*16|bfloat", re.I), "bf16"),
    (re.compile(r"(fp|float)\s*16|half", re.I), "fp16"),
    (re.compile(r"(fp|float)\s*32|tf32|single", re.I), "fp32"),
)
# Weights that differ from parameters × precision by more than this share are flagged.
WEIGHTS_TOLERANCE = 0.25


@dataclass
class Finding:
    code: str
    severity: str  # "error": the plan cannot work as written; "warning": check it
    message: str


@dataclass
class PlanCheck:
    inputs: dict[str, Any] = field(default_factory=dict)
    estimate: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    missing_assumptions: list[str] = field(default_factory=list)
    # The attached path comparison's verdict: its link, recommendation and break-even traffic.
    comparison: dict[str, Any] = field(default_factory=dict)
    # The attached load test beside its prediction: the ratios, the largest gap, the targets.
    measured: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def codes(self) -> list[str]:
        return [f.code for f in self.findings]


def _number(content: dict[str, Any], key: str) -> float | None:
    value = content.get(key)
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def precision_name(text: str) -> str | None:
    """The engine's precision name for what the learner wrote ("BF16", "4-bit AWQ"), or None."""
    for pattern, name in PRECISION_NAMES:
        if pattern.search(text or ""):
            return name
    return None


def plan_serving_inputs(content: dict[str, Any]) -> dict[str, Any]:
    """The engine's serving inputs from the worksheet's numbers (None where the plan is silent)."""
    kv_user = _number(content, "kv_per_user_gb")
    context = _number(content, "context_tokens")
    kv_token_mb = _number(content, "kv_per_token_mb")
    if kv_user is None and context and kv_token_mb:
        # KV per user = context tokens × KV per token (MB → GB: ÷ 1000, GB being 10^9 bytes).
        kv_user = context * kv_token_mb / 1000
    concurrency = _number(content, "concurrency")
    model_gb = _number(content, "model_gb")
    params = _number(content, "params_billion")
    return dict(
        gpu_memory_gb=_number(content, "gpu_memory_gb"),
        model_gb=model_gb,
        # Given weights win; parameters × precision fill in when the weights are not given.
        params_b=params if model_gb is None else None,
        weight_precision=precision_name(str(content.get("precision") or "")),
        overhead_gb=_number(content, "overhead_gb"),
        kv_per_user_gb=kv_user,
        context_tokens=int(context) if context else None,
        users=int(concurrency) if concurrency is not None else None,
    )


def _plan_run(inputs: dict[str, Any]) -> ServingEstimate:
    estimate = calculation_run("serving", inputs)
    assert isinstance(estimate, ServingEstimate)
    return estimate


def plan_estimate(content: dict[str, Any]) -> dict[str, Any]:
    """The calculator's result for the plan (the engine's JSON), or {} without enough numbers."""
    try:
        return dict(_plan_run(plan_serving_inputs(content)).to_dict())
    except CapacityInputError:
        return {}


def comparison_findings(content: dict[str, Any], comparison: dict[str, Any]) -> list[Finding]:
    """Where the plan's recommendation disagrees with its attached path comparison: a path the
    comparison excludes or rejects (an error, with the reason), or a dearer one (a warning)."""
    path = str(content.get("recommendation") or "")
    if not path or not comparison.get("options"):
        return []
    words = PATH_WORDS.get(path, path)
    best = comparison.get("recommended") or {}
    if path in comparison.get("excluded", []):
        message = _(
            "The plan recommends %(path)s, but the attached comparison excludes that path "
            "(a constraint the plan set, such as data that must stay in-house)."
        )
        return [Finding("recommendation_excluded", "error", message % {"path": words})]
    options = [o for o in comparison["options"] if o.get("path") == path]
    meeting = [o for o in options if o.get("meets")]
    if options and not meeting:
        closest = min(options, key=lambda o: (o.get("cost_usd") is None, o.get("cost_usd") or 0))
        message = _(
            "The plan recommends %(path)s, but the attached comparison rejects every %(kind)s "
            "option (%(count)d): the cheapest, %(name)s, misses on %(limiter)s (%(reason)s)."
        ) % {
            "path": words,
            "kind": PATH_NAMES.get(path, path),
            "count": len(options),
            "name": recommendation_label(closest),
            "limiter": str(closest.get("limiter") or "").replace("_", " "),
            "reason": closest.get("reason") or "",
        }
        if best:
            message += " " + _("It recommends %(name)s.") % {"name": recommended_label(comparison)}
        return [Finding("recommendation_rejected", "error", message)]
    if meeting and best and best.get("path") != path:
        cheapest = min(meeting, key=lambda o: o.get("cost_usd") or 0)
        message = _(
            "%(path)s meets every target (%(name)s, %(cost)s), but the attached comparison's "
            "cheapest option that meets is %(best)s at %(best_cost)s: say why in the reasons."
        ) % {
            "path": words[0].upper() + words[1:],
            "name": recommendation_label(cheapest),
            "cost": money(cheapest.get("cost_usd")),
            "best": recommended_label(comparison),
            "best_cost": money(best.get("cost_usd")),
        }
        return [Finding("recommendation_dearer", "warning", message)]
    return []


def plan_check(
    content: dict[str, Any],
    comparison: dict[str, Any] | None = None,
    measured: dict[str, Any] | None = None,
) -> PlanCheck:
    """Recompute the plan's memory estimate; list disagreements and missing assumptions; with a
    path comparison attached, check the recommendation against it; with a load test attached,
    report measured ÷ predicted and the targets it missed."""
    check = PlanCheck()
    if measured:
        check.measured = {
            key: measured.get(key)
            for key in ("link", "ratios", "largest_gap", "targets", "measured", "predicted")
        }
        check.findings.extend(Finding(*f) for f in measured_findings(content, measured))
    if comparison:
        check.comparison = {
            key: comparison.get(key)
            for key in ("link", "estimate", "recommended", "break_even_requests_per_day")
        }
        check.comparison["recommended_label"] = recommended_label(comparison)
        check.findings.extend(comparison_findings(content, comparison))
    for label, fields in ASSUMPTIONS:
        if not any(
            str(content.get(f) if content.get(f) is not None else "").strip() for f in fields
        ):
            check.missing_assumptions.append(label)
    inputs = plan_serving_inputs(content)
    check.inputs = inputs
    try:
        estimate = _plan_run(inputs)
    except CapacityInputError as exc:
        check.findings.append(
            Finding(
                "numbers_missing",
                "warning",
                _(
                    "The calculator cannot recompute this plan's memory estimate (%(reason)s). "
                    "Give GPU memory, model weights (or parameters and precision) and KV cache "
                    "per user (or context length and KV per token)."
                )
                % {"reason": exc},
            )
        )
        return check
    check.estimate = dict(estimate.to_dict())
    # The engine's warnings carry stable codes: weights_do_not_fit, no_room_for_serving (the
    # model fits but leaves no room for KV cache), target_users_do_not_fit (the stated
    # concurrency exceeds what its memory holds).
    for warning in estimate.warnings:
        check.findings.append(Finding(str(warning.code), str(warning.severity), warning.message))
    max_users = int(estimate.max_active_users)
    claimed = _number(content, "claimed_max_users")
    if claimed is not None and int(claimed) > max_users:
        check.findings.append(
            Finding(
                "claimed_users_exceed",
                "error",
                _(
                    "The plan claims %(claimed)d active users fit; with the plan's own numbers "
                    "the calculator finds room for %(max)d."
                )
                % {"claimed": int(claimed), "max": max_users},
            )
        )
    model_gb = _number(content, "model_gb")
    params = _number(content, "params_billion")
    precision = inputs["weight_precision"]
    if model_gb is not None and params is not None and precision is not None:
        # The engine's range for a checkpoint on disk: a quantised one (AWQ, GPTQ, fp8) adds its
        # scales and keeps the embeddings and LM head at 16-bit, so 8 B at int4 is 4.2-7.1 GB.
        low, high = (
            float(b) / 1e9 for b in checkpoint_size_range(Fraction(str(params)) * 10**9, precision)
        )
        expected = f"{low:.1f}" if high - low < 0.05 else f"{low:.1f}–{high:.1f}"
        if not low * (1 - WEIGHTS_TOLERANCE) <= model_gb <= high * (1 + WEIGHTS_TOLERANCE):
            check.findings.append(
                Finding(
                    "weights_disagree",
                    "warning",
                    _(
                        "The weights are given as %(model)s GB, but %(params)s B parameters at "
                        "%(precision)s come to about %(expected)s GB."
                    )
                    % {
                        "model": f"{model_gb:g}",
                        "params": f"{params:g}",
                        "precision": precision,
                        "expected": expected,
                    },
                )
            )
    return check
