"""The peers' grade in the gradebook: a plan graded by its peers gets its Grade and criterion
scores, released and marked as the peers', so the grades CSV and the learner's page show it as
they show an instructor's; an instructor's regrade later makes it theirs (grading.py)."""

from __future__ import annotations

from datetime import datetime

from planner.capstone.grade_audit import grade_change_record
from planner.capstone.outbox import CapstoneEmail, capstone_email_promise
from planner.capstone.peer_models import PeerPlan
from planner.capstone.rubric import rubric_max_points
from planner.models import CapstoneSubmission, Criterion, CriterionScore, Grade, GradeChange, Level


def peer_grade_record(*, plan: PeerPlan, now: datetime) -> Grade | None:
    """Write the plan's peer grade as its submission's released grade (origin: peers), a
    criterion score per peer level, and promise the learner its one email ("graded by your
    peers", once per plan by the outbox's unique key). Call in the transaction deciding the
    plan. None, writing nothing, when the plan is not graded by peers, is a simulation's, or
    its submission has a grade already: the one written before (so finalising twice writes
    one grade), or an instructor's, which wins and brings its own email at release.

    Eight statements: the submission's lock, the grade probe, the criteria and their levels,
    the insert, the scores, the audit row, the email's row."""
    if plan.state != PeerPlan.State.GRADED or plan.run_tag:
        return None
    # The row an instructor's claim and save lock: of the two, the second sees the first's grade.
    submission = CapstoneSubmission.objects.select_for_update().get(pk=plan.submission_id)
    if Grade.objects.filter(submission=submission).exists():
        return None
    criteria = list(
        Criterion.objects.filter(rubric__course_id=plan.course_id).prefetch_related("levels")
    )
    levels: dict[int, Level] = {lv.pk: lv for c in criteria for lv in c.levels.all()}
    keys = {c.pk: c.key for c in criteria}
    chosen = [
        levels[entry["level_id"]]
        for entry in (plan.result.get("criteria") or {}).values()
        if entry.get("level_id") in levels
    ]
    grade = Grade.objects.create(
        submission=submission,
        grader=None,
        origin=Grade.Origin.PEERS,
        status=Grade.Status.RELEASED,
        total_points=sum(lv.points for lv in chosen),
        max_points=rubric_max_points(criteria),
        released_at=now,
    )
    CriterionScore.objects.bulk_create(
        CriterionScore(grade=grade, criterion_id=lv.criterion_id, level=lv, points=lv.points)
        for lv in chosen
    )
    grade_change_record(
        grade=grade,
        actor=None,
        action=GradeChange.Action.PEER_GRADED,
        changes={f"{keys[lv.criterion_id]}.level": [None, lv.key] for lv in chosen},
        now=now,
    )
    capstone_email_promise(
        kind=CapstoneEmail.Kind.PEER_GRADED, submission=submission, grade=grade, now=now
    )
    return grade
