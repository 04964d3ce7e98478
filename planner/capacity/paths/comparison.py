"""What a path comparison hands back: every option, the cheapest one that meets every target and the
runner-up, and what the estimate assumed; its JSON (`to_dict`) is the CLI's and the API's contract."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Final

from planner.capacity.paths.options import PATHS, PathOption, cheapest_first
from planner.capacity.paths.plans import LoadTest
from planner.capacity.results import Assumption, FormulaLine
from planner.capacity.units import CapacityInputError, as_float

NOT_MODELLED: Final = (
    "Autoscaling: self-hosted capacity is sized for the peak and paid around the clock.",
    "Committed-use, spot and batch discounts; egress and storage.",
    "Engineering and operations time to run your own endpoint.",
)


@dataclass(frozen=True, slots=True)
class PathComparison:
    estimate: str  # serving | batch | training
    options: list[PathOption]  # cheapest meeting first, then the rejected
    recommended: PathOption | None
    runner_up: PathOption | None
    excluded: tuple[str, ...]
    break_even_requests_per_day: Fraction | None = None
    load_test: LoadTest | None = None
    deploy_command: str | None = None
    requests_per_day: int | None = None
    peak_concurrency: int | None = None
    cost_series: list[dict[str, Any]] = field(default_factory=list)
    assumptions: list[Assumption] = field(default_factory=list)
    formulas: list[FormulaLine] = field(default_factory=list)
    service_level: dict[str, Any] | None = None  # serving: the load and the targets checked

    @property
    def rejected(self) -> list[PathOption]:
        return [o for o in self.options if not o.meets]

    @property
    def meeting(self) -> list[PathOption]:
        return [o for o in self.options if o.meets]

    def to_dict(self) -> dict[str, Any]:
        """The JSON of the CLI (`--json`) and the API; the keys are a contract."""
        return {
            "estimate": self.estimate,
            "requests_per_day": self.requests_per_day,
            "peak_concurrency": self.peak_concurrency,
            "excluded": list(self.excluded),
            "options": [o.to_dict() for o in self.options],
            "recommended": _pick(self.recommended),
            "runner_up": _pick(self.runner_up),
            "break_even_requests_per_day": (
                as_float(self.break_even_requests_per_day, 1)
                if self.break_even_requests_per_day is not None
                else None
            ),
            "load_test": self.load_test.to_dict() if self.load_test else None,
            "deploy_command": self.deploy_command,
            "cost_series": self.cost_series,
            "missing_assumptions": [a.field for a in self.assumptions],
            "assumptions": [a.to_dict() for a in self.assumptions],
            "formulas": [f.to_dict() for f in self.formulas],
            "not_modelled": list(NOT_MODELLED),
            "service_level": self.service_level,
        }


def _pick(option: PathOption | None) -> dict[str, Any] | None:
    if option is None:
        return None
    return {
        "path": option.path,
        "accelerator": option.accelerator,
        "count": option.count,
        "name": option.name,
        "cost_usd": as_float(option.cost_usd, 2) if option.cost_usd is not None else None,
        "replicas": option.replicas,
        "devices": option.devices if option.devices is not None else option.count,
        "plan_label": option.plan_label,
    }


def check_exclude(exclude: Iterable[str]) -> tuple[str, ...]:
    """The paths a constraint rules out ("data must stay in-house": managed_api)."""
    out = []
    for path in exclude:
        if path not in PATHS:
            raise CapacityInputError("exclude", f"unknown path {path!r}; use {', '.join(PATHS)}")
        if path not in out:
            out.append(path)
    return tuple(out)


# Per-path gaps the comparison fills itself: the device's figures, a split, a measured rate.
PER_PATH_FIELDS: Final = frozenset(
    {
        "gpu_memory_gb",
        "memory_bandwidth_gb_s",
        "tensor_parallel",
        "items_per_s",
        "price_per_hour",
        "api",
        "max_num_seqs",  # per replica, in each option's deploy command
        "decode_batch",
    }
)


def card_assumptions(assumed: list[Assumption], options: Sequence[PathOption]) -> list[Assumption]:
    """The comparison's own assumptions, then those the card's estimates made (from the first
    self-hosted option: the card's gaps are the same on every device), each field once."""
    out = list(assumed)
    seen = {a.field for a in out} | PER_PATH_FIELDS
    first = next((o for o in options if o.self_hosted and o.assumptions), None)
    for a in first.assumptions if first else ():
        if a.field not in seen:
            out.append(a)
            seen.add(a.field)
    return out


def recommend(options: Sequence[PathOption]) -> tuple[PathOption | None, PathOption | None]:
    """The cheapest option that meets every target (priced ones only), and the runner-up."""
    ranked = sorted((o for o in options if o.meets and o.cost_usd is not None), key=cheapest_first)
    return (ranked[0] if ranked else None, ranked[1] if len(ranked) > 1 else None)


UNPRICED: Final = (
    "no published price: it cannot be compared on cost (set one with PLANNER_PRICES_FILE)"
)


def unpriced(option: PathOption) -> PathOption:
    """An option with no price meets nothing: a comparison on cost cannot weigh it, so it is
    neither recommended nor counted in the break-even, and it sorts after the priced ones."""
    if option.cost_usd is not None or not option.meets:
        return option
    return replace(option, meets=False, limiter=None, reason=UNPRICED)


def rank(
    options: list[PathOption], excluded: tuple[str, ...]
) -> tuple[list[PathOption], PathOption | None, PathOption | None]:
    kept = sorted((unpriced(o) for o in options if o.path not in excluded), key=cheapest_first)
    best, second = recommend(kept)
    return kept, best, second
