"""An attached path comparison in the plan's words: its recommendation as the comparison writes
it ("4 × NVIDIA T4"), the paths by name, and its prices."""

from __future__ import annotations

from typing import Any

from planner.capacity.paths.label import recommendation_label

# The worksheet's recommendation values are the comparison's paths (cpu, gpu, tpu, managed_api).
PATH_WORDS = {"cpu": "a CPU", "gpu": "a GPU", "tpu": "a TPU", "managed_api": "the managed API"}
PATH_NAMES = {"cpu": "CPU", "gpu": "GPU", "tpu": "TPU", "managed_api": "managed API"}


def _same_option(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("accelerator") == b.get("accelerator") and a.get("count") == b.get("count")


def comparison_option(comparison: dict[str, Any], option: dict[str, Any]) -> dict[str, Any]:
    """The stored option in full (its `devices` among them) for a short pick such as the
    comparison's `recommended`."""
    options: list[dict[str, Any]] = comparison.get("options") or []
    full = next((o for o in options if _same_option(o, option)), {})
    return {**full, **option} if full else option


def recommended_label(comparison: dict[str, Any]) -> str:
    """The attached comparison's recommendation as the comparison writes it ("4 × NVIDIA T4"),
    "" when no path meets every target."""
    best = comparison.get("recommended") or {}
    return recommendation_label(comparison_option(comparison, best)) if best else ""


def money(value: Any) -> str:
    return f"${value:,.2f}" if isinstance(value, (int, float)) else "unpriced"
