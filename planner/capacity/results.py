"""What every estimate shares: named warnings with stable codes, and missing assumptions."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


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


class Severity(StrEnum):
    ERROR = "error"  # the plan does not work as stated
    WARNING = "warning"  # the plan works, with a caveat the learner must read


@dataclass(frozen=True, slots=True)
class EstimateWarning:
    code: WarningCode
    severity: Severity
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"code": str(self.code), "severity": str(self.severity), "message": self.message}


@dataclass(frozen=True, slots=True)
class Assumption:
    """A deciding input the caller did not give, and the value the estimate used instead."""

    field: str
    assumed: str

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "assumed": self.assumed}


@dataclass(frozen=True, slots=True)
class FormulaLine:
    """One formula with the caller's numbers substituted, for the page and the human CLI output."""

    label: str
    formula: str
    substituted: str

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "formula": self.formula, "substituted": self.substituted}
