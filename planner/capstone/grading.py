"""Writes for grading: claim a submission (a time-limited lease), save, release and regrade."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from planner.capstone.grade_audit import grade_change_record, grade_diff, grade_snapshot
from planner.capstone.outbox import (
    CapstoneEmail,
    capstone_email_promise,
    grade_change_email_promise,
)
from planner.capstone.rubric import rubric_max_points
from planner.models import (
    CapstoneSubmission,
    Criterion,
    CriterionScore,
    Grade,
    GradeChange,
    GradingClaim,
    Level,
)

# Long enough to read a one-page plan and grade it; short enough that an abandoned claim frees
# itself before the next grading session.
CLAIM_LEASE = timedelta(minutes=30)


class ClaimHeld(Exception):
    """Another grader holds a live lease on the submission."""

    def __init__(self, claim: GradingClaim) -> None:
        self.claim = claim
        super().__init__(
            _("%(grader)s is grading this submission (claimed until %(until)s UTC).")
            % {"grader": claim.grader, "until": f"{claim.expires_at:%H:%M}"}
        )


class ClaimRequired(Exception):
    """Grading needs a live claim held by the grader."""


class ConflictOfInterest(Exception):
    """An instructor never claims or grades their own submission."""

    def __init__(self) -> None:
        super().__init__(
            _("This is your own submission: another instructor of the course grades it.")
        )


class GradeReleasedError(Exception):
    """A released grade changes only through a recorded regrade."""


@dataclass(frozen=True)
class ScoreInput:
    criterion_id: int
    level_id: int | None
    comment: str = ""


def submission_claim(*, grader: User, submission_id: int, now: datetime) -> GradingClaim:
    """Lease the submission to the grader; refuse while another grader's lease is live.

    The submission row is locked for the decision, so of two graders claiming at once the
    second waits, then sees the first one's claim. The grader's own live claim is renewed;
    an expired claim of anyone is taken over. The grader's own submission is refused
    (ConflictOfInterest).
    """
    with transaction.atomic():
        submission = CapstoneSubmission.objects.select_for_update().get(pk=submission_id)
        _refuse_own(grader=grader, submission=submission)
        claim = GradingClaim.objects.select_related("grader").filter(submission=submission).first()
        if claim is not None and claim.grader_id != grader.pk and claim.expires_at > now:
            raise ClaimHeld(claim)
        if claim is None:
            return GradingClaim.objects.create(
                submission=submission, grader=grader, claimed_at=now, expires_at=now + CLAIM_LEASE
            )
        if claim.grader_id != grader.pk:
            claim.grader = grader
            claim.claimed_at = now
        claim.expires_at = now + CLAIM_LEASE
        claim.save()
        return claim


def submission_unclaim(*, grader: User, submission_id: int) -> None:
    """Give up one's own claim (someone else's is left alone)."""
    GradingClaim.objects.filter(submission_id=submission_id, grader=grader).delete()


def _refuse_own(*, grader: User, submission: CapstoneSubmission) -> None:
    if submission.learner_id == grader.pk:
        raise ConflictOfInterest()


def _require_claim(*, grader: User, submission: CapstoneSubmission, now: datetime) -> None:
    claim = GradingClaim.objects.filter(submission=submission).first()
    if claim is None or claim.grader_id != grader.pk or claim.expires_at <= now:
        raise ClaimRequired(
            _("Claim this submission before grading it; your claim may have expired.")
        )
    # Working on it renews the lease.
    claim.expires_at = now + CLAIM_LEASE
    claim.save(update_fields=["expires_at"])


def _apply(*, grade: Grade, scores: list[ScoreInput], overall_feedback: str) -> None:
    """Write the levels, comments and feedback; recompute the total from the levels' points."""
    criteria = {
        c.pk: c
        for c in Criterion.objects.filter(
            rubric__course_id=grade.submission.course_id
        ).prefetch_related("levels")
    }
    for item in scores:
        criterion = criteria.get(item.criterion_id)
        if criterion is None:
            raise ValidationError(_("That criterion is not in this course's rubric."))
        level: Level | None = None
        if item.level_id is not None:
            level = next((lv for lv in criterion.levels.all() if lv.pk == item.level_id), None)
            if level is None:
                raise ValidationError(
                    _("%(criterion)s: choose one of its own levels.") % {"criterion": criterion}
                )
        CriterionScore.objects.update_or_create(
            grade=grade,
            criterion=criterion,
            defaults={
                "level": level,
                "points": level.points if level else 0,
                "comment": item.comment.strip(),
            },
        )
    grade.overall_feedback = overall_feedback.strip()
    grade.total_points = sum(s.points for s in grade.scores.filter(level__isnull=False))
    grade.max_points = rubric_max_points(criteria.values())
    grade.save()


def _claimed_submission(*, grader: User, submission_id: int, now: datetime) -> CapstoneSubmission:
    """Lock the submission for this grading action and check (and renew) the grader's claim."""
    submission = CapstoneSubmission.objects.select_for_update().get(pk=submission_id)
    # Checked on every write too: a claim taken before this rule existed grants nothing.
    _refuse_own(grader=grader, submission=submission)
    _require_claim(grader=grader, submission=submission, now=now)
    return submission


def grade_save_draft(
    *,
    grader: User,
    submission_id: int,
    scores: list[ScoreInput],
    overall_feedback: str,
    now: datetime,
) -> Grade:
    """Save the grade as a draft the learner cannot see. Needs the grader's live claim."""
    with transaction.atomic():
        submission = _claimed_submission(grader=grader, submission_id=submission_id, now=now)
        grade, _created = Grade.objects.get_or_create(
            submission=submission, defaults={"grader": grader}
        )
        if grade.status == Grade.Status.RELEASED:
            raise GradeReleasedError(_("This grade is released: change it with a regrade."))
        before = grade_snapshot(grade)
        grade.grader = grader
        _apply(grade=grade, scores=scores, overall_feedback=overall_feedback)
        grade_change_record(
            grade=grade,
            actor=grader,
            action=GradeChange.Action.DRAFT_SAVED,
            changes=grade_diff(before, grade_snapshot(grade)),
            now=now,
        )
        return grade


def _require_complete(grade: Grade) -> None:
    criteria = Criterion.objects.filter(rubric__course_id=grade.submission.course_id)
    scored = set(grade.scores.filter(level__isnull=False).values_list("criterion_id", flat=True))
    missing = [c for c in criteria if c.pk not in scored]
    if not criteria.exists():
        raise ValidationError(_("This course has no rubric criteria to grade against."))
    if missing:
        # The ids let the page put each error beside its criterion's levels.
        raise ValidationError(
            _("Choose a level for every criterion before releasing: %(missing)s."),
            code="levels_missing",
            params={
                "missing": ", ".join(str(c) for c in missing),
                "criterion_ids": [c.pk for c in missing],
            },
        )


def grade_release(
    *,
    grader: User,
    submission_id: int,
    now: datetime,
    scores: list[ScoreInput] | None = None,
    overall_feedback: str | None = None,
) -> Grade:
    """Release the grade to the learner (saving the given scores first) and email them."""
    with transaction.atomic():
        if scores is not None:
            grade = grade_save_draft(
                grader=grader,
                submission_id=submission_id,
                scores=scores,
                overall_feedback=overall_feedback or "",
                now=now,
            )
        submission = _claimed_submission(grader=grader, submission_id=submission_id, now=now)
        grade = Grade.objects.select_related("submission").get(submission=submission)
        if grade.status == Grade.Status.RELEASED:
            raise GradeReleasedError(_("This grade is already released."))
        _require_complete(grade)
        grade.status = Grade.Status.RELEASED
        grade.released_at = now
        grade.grader = grader
        grade.save()
        grade_change_record(
            grade=grade,
            actor=grader,
            action=GradeChange.Action.RELEASED,
            changes={"status": [Grade.Status.DRAFT, Grade.Status.RELEASED]},
            now=now,
        )
        GradingClaim.objects.filter(submission=submission).delete()
        capstone_email_promise(
            kind=CapstoneEmail.Kind.GRADE_RELEASED, submission=submission, grade=grade, now=now
        )
        return grade


def grade_regrade(
    *,
    grader: User,
    submission_id: int,
    scores: list[ScoreInput],
    overall_feedback: str,
    now: datetime,
) -> Grade:
    """Change a released grade (the peers' one too, which becomes the instructor's): recorded;
    the learner is emailed once the regrades stop."""
    with transaction.atomic():
        submission = _claimed_submission(grader=grader, submission_id=submission_id, now=now)
        grade = Grade.objects.select_related("submission").get(submission=submission)
        if grade.status != Grade.Status.RELEASED:
            raise ValidationError(_("Only a released grade is regraded; save the draft instead."))
        before = {**grade_snapshot(grade), "total_points": grade.total_points}
        # An instructor's regrade of the peers' grade makes it the instructor's, even unchanged.
        grade.origin = Grade.Origin.INSTRUCTOR
        _apply(grade=grade, scores=scores, overall_feedback=overall_feedback)
        _require_complete(grade)
        changes = grade_diff(before, {**grade_snapshot(grade), "total_points": grade.total_points})
        if not changes:
            return grade
        grade.grader = grader
        grade.released_at = now
        grade.save()
        grade_change_record(
            grade=grade, actor=grader, action=GradeChange.Action.REGRADED, changes=changes, now=now
        )
        grade_change_email_promise(grade=grade, now=now)
        return grade
