"""Instructor pages of the capstone: grading queue, claim, grade by rubric, rubric editing, CSV."""

from __future__ import annotations

import csv
from datetime import datetime
from itertools import chain
from typing import TYPE_CHECKING, Protocol

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_POST

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from courses.selectors import courses_taught_only
from planner.capstone.forms import GradeForm
from planner.capstone.grades_csv import grades_csv_header, grades_csv_rows
from planner.capstone.grading import (
    ClaimHeld,
    ClaimRequired,
    ConflictOfInterest,
    GradeReleasedError,
    ScoreInput,
    grade_regrade,
    grade_release,
    grade_save_draft,
    submission_claim,
    submission_unclaim,
)
from planner.capstone.grading_selectors import (
    PEER_FILTERS,
    QUEUE_STATUSES,
    grade_for,
    grading_queue_page,
    live_claim_for,
    peer_flagged_count,
    queue_counts,
    rubric_for,
    submissions_for_grader,
)
from planner.capstone.grading_selectors import (
    grading_queue as grading_queue_select,
)
from planner.capstone.measured_selectors import measured_against_predicted
from planner.capstone.peer_selectors import peer_panel_for
from planner.capstone.rubric import (
    rubric_max_points,
)
from planner.capstone.selectors import submission_cards, submission_content_sections
from planner.models import CapstoneSubmission, Grade

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


# A page anchor is a submission id: a positive 64-bit integer, or it is refused.
_AFTER_MAX = 2**63 - 1


@require_GET
@instructor_required
def grading_queue(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Submitted plans of the user's courses, 50 a page (`?after=<id>` for the next);
    `?course=<slug>`, `?status=` and `?peer=flagged` filter it, and each shows its count."""
    courses = list(courses_taught_only(user=request.user))
    course_key = request.GET.get("course", "")
    status = request.GET.get("status", "")
    after_text = request.GET.get("after", "")
    after: int | None = None
    if after_text:
        if not after_text.isdigit() or len(after_text) > 19 or int(after_text) > _AFTER_MAX:
            return HttpResponseBadRequest("after: a submission id from the page's next link")
        after = int(after_text)
    # A slug, as the teaching pages link; a course id is still accepted for older links.
    selected = next((c for c in courses if c.slug == course_key), None) or next(
        (c for c in courses if str(c.pk) == course_key), None
    )
    if status not in dict(QUEUE_STATUSES):
        status = ""
    peer = request.GET.get("peer", "")
    if peer not in dict(PEER_FILTERS):
        peer = ""
    now = timezone.now()
    course_ids = [selected.pk] if selected else [c.pk for c in courses]
    queue = grading_queue_select(
        user=request.user, now=now, status=status or None, course_ids=course_ids, peer=peer
    )
    page = grading_queue_page(queue, after=after)
    counts = queue_counts(course_ids=course_ids, now=now)
    flagged = peer_flagged_count(course_ids=course_ids)
    context = {
        "courses": courses,
        "selected_course": selected,
        "status": status,
        "statuses": [(value, label, counts[value]) for value, label in QUEUE_STATUSES],
        "status_labels": dict(QUEUE_STATUSES),
        "peer": peer,
        "peer_filters": [(value, label, flagged) for value, label in PEER_FILTERS],
        # Flagged in a status: counted (a few plans); otherwise from the counts already read.
        "total": queue.count() if peer else counts[status or "total"],
        "peer_column": bool(peer) or any(hasattr(row, "peer_plan") for row in page.rows),
        "rows": page.rows,
        "next_after": page.next_after,
        "after": after,
        "now": now,
        "measured": measured_against_predicted(course_ids=course_ids),
    }
    return render(request, "planner/capstone/grading_queue.html", context)


def _submission_for(request: AuthenticatedHttpRequest, submission_id: int) -> CapstoneSubmission:
    return get_object_or_404(submissions_for_grader(user=request.user), pk=submission_id)


@require_POST
@instructor_required
def claim(request: AuthenticatedHttpRequest, submission_id: int) -> HttpResponse:
    submission = _submission_for(request, submission_id)
    try:
        submission_claim(grader=request.user, submission_id=submission.pk, now=timezone.now())
    except ClaimHeld as exc:
        messages.error(request, str(exc))
        return redirect("capstone:grade", submission_id=submission.pk)
    except ConflictOfInterest as exc:
        messages.error(request, str(exc))
        return redirect("capstone:grading_queue")
    messages.success(request, _("Claimed: it is yours to grade for the next 30 minutes."))
    # Straight to the rubric: the next Tab lands on the first level, not the site menu.
    return redirect(reverse("capstone:grade", kwargs={"submission_id": submission.pk}) + "#rubric")


@require_POST
@instructor_required
def unclaim(request: AuthenticatedHttpRequest, submission_id: int) -> HttpResponse:
    submission = _submission_for(request, submission_id)
    submission_unclaim(grader=request.user, submission_id=submission.pk)
    messages.success(request, _("Claim given up."))
    return redirect("capstone:grading_queue")


def _grade_page(
    request: AuthenticatedHttpRequest,
    submission: CapstoneSubmission,
    form: GradeForm | None = None,
    status: int = 200,
) -> HttpResponse:
    now = timezone.now()
    rubric = rubric_for(course=submission.course)
    criteria = list(rubric.criteria.all()) if rubric else []
    grade = grade_for(submission=submission)
    if form is None:
        initial: dict[str, object] = {}
        if grade is not None:
            initial["overall_feedback"] = grade.overall_feedback
            for score in grade.scores.all():
                initial[f"level_{score.criterion_id}"] = score.level_id
                initial[f"comment_{score.criterion_id}"] = score.comment
        form = GradeForm(initial=initial, criteria=criteria)
    claim_obj = live_claim_for(submission=submission, now=now)
    context = {
        "submission": submission,
        "sections": submission_content_sections(submission.content),
        "cards": submission_cards(submission),
        "check": submission.check_result,
        "rubric": rubric,
        "form": form,
        "grade": grade,
        "claim": claim_obj,
        "mine": claim_obj is not None and claim_obj.grader_id == request.user.pk,
        "released": grade is not None and grade.status == Grade.Status.RELEASED,
        "changes": list(grade.changes.all()[:20]) if grade else [],
        "max_points": rubric_max_points(criteria),
        "peer": peer_panel_for(submission=submission),
    }
    return render(request, "planner/capstone/grade.html", context, status=status)


@require_GET
@instructor_required
def grade(request: AuthenticatedHttpRequest, submission_id: int) -> HttpResponse:
    return _grade_page(request, _submission_for(request, submission_id))


class _GradeWrite(Protocol):
    def __call__(
        self,
        *,
        grader: User,
        submission_id: int,
        scores: list[ScoreInput],
        overall_feedback: str,
        now: datetime,
    ) -> Grade: ...


# The grading form's three buttons: the service each one calls and what the grader is told.
GRADE_ACTIONS: dict[str, tuple[_GradeWrite, StrOrPromise]] = {
    "draft": (
        grade_save_draft,
        _("Draft saved. The learner cannot see it until you release it."),
    ),
    "release": (grade_release, _("Grade released; the learner is being emailed.")),
    "regrade": (grade_regrade, _("Regrade recorded; the learner is being emailed.")),
}


@require_POST
@instructor_required
def grade_save(request: AuthenticatedHttpRequest, submission_id: int) -> HttpResponse:
    """One form, three buttons: save draft, release, or regrade a released grade."""
    submission = _submission_for(request, submission_id)
    rubric = rubric_for(course=submission.course)
    form = GradeForm(request.POST, criteria=list(rubric.criteria.all()) if rubric else [])
    if not form.is_valid():
        return _grade_page(request, submission, form, status=400)
    action = request.POST.get("action", "draft")
    write, message = GRADE_ACTIONS.get(action, GRADE_ACTIONS["draft"])
    try:
        write(
            grader=request.user,
            submission_id=submission.pk,
            scores=form.scores(),
            overall_feedback=form.cleaned_data["overall_feedback"],
            now=timezone.now(),
        )
    except (ClaimRequired, GradeReleasedError) as exc:
        form.add_error(None, str(exc))
        return _grade_page(request, submission, form, status=409)
    except ConflictOfInterest as exc:
        form.add_error(None, str(exc))
        return _grade_page(request, submission, form, status=403)
    except ValidationError as exc:
        form.add_error(None, exc)
        if exc.code == "levels_missing" and exc.params:
            for criterion_id in exc.params["criterion_ids"]:
                form.add_error(f"level_{criterion_id}", _("Choose a level to release the grade."))
        return _grade_page(request, submission, form, status=400)
    messages.success(request, message)
    if action == "release":
        return redirect("capstone:grading_queue")
    return redirect("capstone:grade", submission_id=submission.pk)


class _Echo:
    """A file-like that hands back what csv.writer writes, one row at a time."""

    def write(self, value: str) -> str:
        return value


@require_GET
@instructor_required  # type: ignore[arg-type]  # typed for HttpResponse; a stream serves alike
def grades_export(request: AuthenticatedHttpRequest, course_slug: str) -> StreamingHttpResponse:
    """The grades CSV, streamed as it is read (a server-side cursor): constant memory, and the
    download starts at once however many learners the course has."""
    course = get_object_or_404(courses_taught_only(user=request.user), slug=course_slug)
    header, criteria = grades_csv_header(course=course)
    writer = csv.writer(_Echo())
    lines = chain([header], grades_csv_rows(course=course, criteria=criteria))
    response = StreamingHttpResponse(
        (writer.writerow(row) for row in lines), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{course.slug}-capstone-grades.csv"'
    return response
