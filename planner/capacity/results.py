"""What every estimate shares: named warnings with stable codes, and missing assumptions."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar, Self, overload

from planner.capacity.units import bytes_to_gb


class WarningCode(StrEnum):
    """Stable codes: the CLI, the API, the page and the capstone check match on these."""

    WEIGHTS_DO_NOT_FIT = "weights_do_not_fit"
    NO_ROOM_FOR_SERVING = "no_room_for_serving"
    TARGET_USERS_DO_NOT_FIT = "target_users_do_not_fit"
    MEMORY_BOUND = "memory_bound"
    CONTEXT_EXCEEDS_MODEL = "context_exceeds_model"
    TRAINING_DOES_NOT_FIT = "training_does_not_fit"
    ACTIVATIONS_NOT_COUNTED = "activations_not_counted"
    WINDOW_TOO_SHORT = "window_too_short"
    NOT_AN_ACCELERATOR = "not_an_accelerator"
    PREFILL_TOO_SLOW = "prefill_too_slow"
    SLIDING_WINDOW_UPPER_BOUND = "sliding_window_upper_bound"
    MLA_LATENT_CACHE = "mla_latent_cache"
    MOE_ALL_EXPERTS_RESIDENT = "moe_all_experts_resident"
    MULTIMODAL_ACTIVATIONS = "multimodal_activations"
    PRECISION_NOT_NATIVE = "precision_not_native"
    DECODE_TOO_SLOW = "decode_too_slow"  # compute-bound (or fixed-cost-bound) below the target
    ARRIVALS_EXCEED_PREFILL = "arrivals_exceed_prefill"  # new prompts need more than the GPUs' time


class Severity(StrEnum):
    ERROR = "error"  # the plan does not work as stated
    WARNING = "warning"  # the plan works, with a caveat the learner must read


class _PlainText:
    """A dataclass of strings (and string enums) as a JSON object of plain strings."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return {f.name: str(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class EstimateWarning(_PlainText):
    code: WarningCode
    severity: Severity
    message: str


@dataclass(frozen=True, slots=True)
class Assumption(_PlainText):
    """A deciding input the caller did not give, and the value the estimate used instead."""

    field: str
    assumed: str


@dataclass(frozen=True, slots=True)
class FormulaLine(_PlainText):
    """One formula with the caller's numbers substituted, for the page and the human CLI output."""

    label: str
    formula: str
    substituted: str


@dataclass(slots=True)
class Trail:
    """What the steps of one estimate collect as they go: warnings, assumptions, formulas."""

    warnings: list[EstimateWarning] = field(default_factory=list)
    assumptions: list[Assumption] = field(default_factory=list)
    formulas: list[FormulaLine] = field(default_factory=list)

    def formula(self, label: str, formula: str, substituted: str) -> None:
        self.formulas.append(FormulaLine(label, formula, substituted))

    def assume(self, name: str, assumed: str) -> None:
        self.assumptions.append(Assumption(name, assumed))

    def warn(self, code: WarningCode, severity: Severity, message: str) -> None:
        self.warnings.append(EstimateWarning(code, severity, message))

    @property
    def has_error(self) -> bool:
        return any(w.severity == Severity.ERROR for w in self.warnings)


class EstimateNotes:
    """What every estimate carries beside its figures: warnings, assumptions, formulas, and what
    the estimate does not model (`NOT_MODELLED`, a sentence each)."""

    __slots__ = ()
    NOT_MODELLED: ClassVar[tuple[str, ...]] = ()
    warnings: list[EstimateWarning]
    assumptions: list[Assumption]
    formulas: list[FormulaLine]

    @property
    def missing_assumptions(self) -> list[str]:
        return [a.field for a in self.assumptions]

    def notes_dict(self) -> dict[str, Any]:
        """The closing keys of every estimate's JSON (a contract, like the figures before them)."""
        return {
            "warnings": [w.to_dict() for w in self.warnings],
            "missing_assumptions": self.missing_assumptions,
            "assumptions": [a.to_dict() for a in self.assumptions],
            "formulas": [f.to_dict() for f in self.formulas],
            "not_modelled": list(self.NOT_MODELLED),
        }


class Gigabytes:
    """A read-only GB view of an exact byte-count field: `weights_gb = Gigabytes("weights_bytes")`."""

    def __init__(self, bytes_field: str) -> None:
        self.bytes_field = bytes_field

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> Self: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> float: ...
    def __get__(self, obj: object | None, objtype: type | None = None) -> Self | float:
        if obj is None:
            return self
        return bytes_to_gb(getattr(obj, self.bytes_field))
