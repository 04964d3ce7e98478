"""Every model of the planner, for Django (app label `planner`) and for other apps' imports.

Each sub-domain keeps its models beside its services: planner/cards/models.py,
planner/capstone/models.py and the capstone's email outbox, planner/capstone/outbox.py.
"""

from __future__ import annotations

from planner.capstone.models import (
    CapstoneSubmission,
    CapstoneWorksheet,
    Criterion,
    CriterionScore,
    Grade,
    GradeChange,
    GradingClaim,
    Level,
    Rubric,
    SubmissionImmutableError,
)
from planner.capstone.outbox import CapstoneEmail
from planner.capstone.peer_models import (
    CalibrationExample,
    CalibrationStaffLevel,
    ExpiredPeerAssignment,
    PeerAssessment,
    PeerPlan,
    PeerScore,
    PeerSettings,
)
from planner.capstone.worksheet_fields import (
    WORKSHEET_FIELDS,
    WORKSHEET_NUMBER_FIELDS,
    WORKSHEET_SECTIONS,
    WORKSHEET_TEXT_FIELDS,
)
from planner.cards.models import WorkloadCard

__all__ = [
    "WORKSHEET_FIELDS",
    "WORKSHEET_NUMBER_FIELDS",
    "WORKSHEET_SECTIONS",
    "WORKSHEET_TEXT_FIELDS",
    "CalibrationExample",
    "CalibrationStaffLevel",
    "CapstoneEmail",
    "CapstoneSubmission",
    "CapstoneWorksheet",
    "Criterion",
    "CriterionScore",
    "ExpiredPeerAssignment",
    "Grade",
    "GradeChange",
    "GradingClaim",
    "Level",
    "PeerAssessment",
    "PeerPlan",
    "PeerScore",
    "PeerSettings",
    "Rubric",
    "SubmissionImmutableError",
    "WorkloadCard",
]
