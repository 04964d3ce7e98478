"""The grade's audit log: a grade's state as recorded, what an action changed, the row saying who
(an instructor, or the peer step) did it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from accounts.models import User
from planner.capstone.models import Grade, GradeChange


def grade_snapshot(grade: Grade) -> dict[str, Any]:
    """Who graded, the feedback, and each criterion's level key and comment."""
    state: dict[str, Any] = {"origin": grade.origin, "overall_feedback": grade.overall_feedback}
    for score in grade.scores.select_related("criterion", "level"):
        key = score.criterion.key
        state[f"{key}.level"] = score.level.key if score.level else None
        state[f"{key}.comment"] = score.comment
    return state


def grade_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[Any]]:
    return {
        key: [before.get(key), after.get(key)]
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    }


def grade_change_record(
    *,
    grade: Grade,
    actor: User | None,
    action: GradeChange.Action,
    changes: dict[str, Any],
    now: datetime,
) -> None:
    """Write the audit row of one grading action (who, when, what changed); no actor: the
    peer step."""
    GradeChange.objects.create(grade=grade, actor=actor, action=action, changes=changes, at=now)
