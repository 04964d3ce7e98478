"""The peer step's pages: calibrate, assess a peer, assess oneself, see one's peer grade; the
instructors' peer settings."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from courses.models import Course
from courses.selectors import courses_taught_only
from planner.capstone.peer_assignment import (
    peer_assessment_submit,
    peer_assign,
    self_assessment_submit,
)
from planner.capstone.peer_calibration import (
    calibration_example_next,
    calibration_state,
    calibration_submit,
)
from planner.capstone.peer_expired import assessment_or_expired, expired_page
from planner.capstone.peer_forms import ID_DIGITS, PeerSettingsForm, level_choices_posted
from planner.capstone.peer_models import PeerAssessment
from planner.capstone.peer_selectors import (
    latest_submission_for,
    open_assessment_for,
    peer_assessments_done,
    peer_grade_rows,
    peer_overall_comments,
    peer_plan_for,
    released_staff_grade,
    rubric_criteria,
    self_assessment_for,
)
from planner.capstone.peer_services import (
    COMMENT_MAX,
    PeerStepRefused,
    peer_settings_for,
    peer_settings_save,
)
from planner.capstone.selectors import (
    capstone_courses_for,
    submission_content_sections,
    submissions_for_learner,
)

# Attempts are at most CALIBRATION_ATTEMPTS_MAX (10): two digits.
ATTEMPT_DIGITS = 2
PEER_TEMPLATE = "planner/capstone/peer.html"
ASSESS_TEMPLATE = "planner/capstone/peer_assess.html"


def _course(request: AuthenticatedHttpRequest, course_slug: str) -> Course:
    return get_object_or_404(capstone_courses_for(learner=request.user), slug=course_slug)


def _peer_page(
    request: AuthenticatedHttpRequest,
    course: Course,
    *,
    errors: dict[int, str] | None = None,
    feedback: object = None,
    status: int = 200,
) -> HttpResponse:
    """The peer page; on an htmx request only its calibration section (a calibration's
    feedback replaces the example in place)."""
    settings = peer_settings_for(course=course)
    submission = latest_submission_for(learner=request.user, course=course)
    calibration = calibration_state(learner=request.user, course=course)
    example = calibration_example_next(learner=request.user, course=course)
    plan = peer_plan_for(submission=submission) if submission else None
    context = {
        "course": course,
        "settings": settings,
        "submission": submission,
        "plan": plan,
        "calibration": calibration,
        "example": example,
        "criteria": rubric_criteria(course=course),
        "open_assessment": open_assessment_for(assessor=request.user, course=course),
        "done": peer_assessments_done(assessor=request.user, course=course),
        "self_assessment": self_assessment_for(plan=plan) if plan else None,
        "errors": errors or {},
        "posted": request.POST if request.method == "POST" else {},
        "feedback": feedback,
    }
    template = f"{PEER_TEMPLATE}#calibration" if request.htmx else PEER_TEMPLATE
    return render(request, template, context, status=status)


@require_GET
@login_required
def peer(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    """The learner's peer step: calibration, then peers' plans, then (optionally) their own."""
    return _peer_page(request, _course(request, course_slug))


@require_POST
@login_required
def peer_calibrate(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = _course(request, course_slug)
    example_id = request.POST.get("example", "")
    attempt = request.POST.get("attempt", "")
    criteria = rubric_criteria(course=course)
    choices, errors = level_choices_posted(request.POST, criteria)
    if not example_id.isdigit() or len(example_id) > ID_DIGITS:
        messages.error(request, _("example: reload the page and score the example shown."))
        return _peer_page(request, course, status=400)
    if not attempt.isdigit() or len(attempt) > ATTEMPT_DIGITS:
        messages.error(request, _("attempt: reload the page and score the example shown."))
        return _peer_page(request, course, status=400)
    if errors:
        return _peer_page(request, course, errors=errors, status=400)
    try:
        feedback = calibration_submit(
            learner=request.user,
            course=course,
            example_id=int(example_id),
            attempt=int(attempt),
            choices=choices,
            now=timezone.now(),
        )
    except PeerStepRefused as exc:
        messages.error(request, str(exc))
        return redirect("capstone:peer", course_slug=course.slug)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return _peer_page(request, course, status=400)
    return _peer_page(request, course, feedback=feedback)


@require_POST
@login_required
def peer_assign_view(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = _course(request, course_slug)
    settings = peer_settings_for(course=course)
    calibration = calibration_state(learner=request.user, course=course)
    waiting = calibration_example_next(learner=request.user, course=course)
    if not settings.enabled or latest_submission_for(learner=request.user, course=course) is None:
        messages.error(request, _("Submit your plan first; then you assess your peers'."))
        return redirect("capstone:peer", course_slug=course.slug)
    if waiting is not None and not calibration.done:
        messages.error(request, _("Calibrate first: score the example below."))
        return redirect("capstone:peer", course_slug=course.slug)
    assessment = peer_assign(assessor=request.user, course=course, now=timezone.now())
    if assessment is None:
        messages.info(
            request,
            _("No plan is waiting for you now. We will email you when one is."),
        )
        return redirect("capstone:peer", course_slug=course.slug)
    return redirect("capstone:peer_assessment", assessment_id=assessment.pk)


def _assess_page(
    request: AuthenticatedHttpRequest,
    assessment: PeerAssessment,
    *,
    errors: dict[int, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    assert assessment.plan is not None
    submission = assessment.plan.submission
    context = {
        "assessment": assessment,
        "course": assessment.course,
        "submission": submission,
        "sections": submission_content_sections(submission.content),
        "check": submission.check_result,
        "criteria": rubric_criteria(course=assessment.course),
        "errors": errors or {},
        "posted": request.POST if request.method == "POST" else {},
    }
    return render(request, ASSESS_TEMPLATE, context, status=status)


@require_GET
@login_required
def peer_assessment(request: AuthenticatedHttpRequest, assessment_id: int) -> HttpResponse:
    assessment = assessment_or_expired(request, assessment_id)
    if isinstance(assessment, HttpResponse):
        return assessment
    if assessment.completed_at is not None:
        messages.info(request, _("You have assessed this plan; thank you."))
        return redirect("capstone:peer", course_slug=assessment.course.slug)
    return _assess_page(request, assessment)


@require_POST
@login_required
def peer_assessment_save(request: AuthenticatedHttpRequest, assessment_id: int) -> HttpResponse:
    assessment = assessment_or_expired(request, assessment_id)
    if isinstance(assessment, HttpResponse):
        return assessment
    criteria = rubric_criteria(course=assessment.course)
    choices, errors = level_choices_posted(request.POST, criteria)
    comment = request.POST.get("comment", "")
    if len(comment) > COMMENT_MAX:
        messages.error(request, _("comment: at most %(max)s characters.") % {"max": COMMENT_MAX})
        return _assess_page(request, assessment, status=400)
    if errors:
        return _assess_page(request, assessment, errors=errors, status=400)
    try:
        peer_assessment_submit(
            assessor=request.user,
            assessment_id=assessment.pk,
            choices=choices,
            comment=comment,
            now=timezone.now(),
        )
    except PeerStepRefused as exc:
        messages.info(request, str(exc))
    except PeerAssessment.DoesNotExist:  # expired between the read and the save's lock
        return expired_page(request, assessment_id)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return _assess_page(request, assessment, status=400)
    else:
        messages.success(request, _("Assessment saved. Thank you."))
    return redirect("capstone:peer", course_slug=assessment.course.slug)


@require_POST
@login_required
def peer_self(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = _course(request, course_slug)
    submission = latest_submission_for(learner=request.user, course=course)
    plan = peer_plan_for(submission=submission) if submission else None
    if plan is None:
        raise Http404
    choices, errors = level_choices_posted(request.POST, rubric_criteria(course=course))
    comment = request.POST.get("comment", "")[: COMMENT_MAX + 1]
    if errors or len(comment) > COMMENT_MAX:
        return _peer_page(request, course, errors=errors, status=400)
    try:
        self_assessment_submit(
            learner=request.user, plan=plan, choices=choices, comment=comment, now=timezone.now()
        )
    except PeerStepRefused as exc:
        messages.info(request, str(exc))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return _peer_page(request, course, status=400)
    else:
        messages.success(request, _("Your self-assessment is saved."))
    return redirect("capstone:peer", course_slug=course.slug)


@require_GET
@login_required
def peer_grade(request: AuthenticatedHttpRequest, submission_id: int) -> HttpResponse:
    """The learner's peer grade: each criterion's level, how confident the estimate is and the
    peers' comments; an instructor's released grade overrides it."""
    submission = get_object_or_404(submissions_for_learner(learner=request.user), pk=submission_id)
    plan = peer_plan_for(submission=submission)
    context = {
        "submission": submission,
        "course": submission.course,
        "plan": plan,
        "staff_grade": released_staff_grade(submission=submission),
        "rows": peer_grade_rows(plan=plan) if plan is not None else [],
        "comments": peer_overall_comments(plan=plan) if plan is not None else [],
    }
    return render(request, "planner/capstone/peer_grade.html", context)


@require_http_methods(["GET", "POST"])
@instructor_required
def peer_settings(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = get_object_or_404(courses_taught_only(user=request.user), slug=course_slug)
    settings = peer_settings_for(course=course)
    form = PeerSettingsForm(request.POST or None, instance=settings)
    if request.method == "POST":
        if form.is_valid():
            peer_settings_save(course=course, **form.cleaned_data)
            messages.success(request, _("Peer settings saved."))
            return redirect("capstone:peer_settings", course_slug=course.slug)
        return render(
            request,
            "planner/capstone/peer_settings.html",
            {"course": course, "form": form},
            status=400,
        )
    return render(request, "planner/capstone/peer_settings.html", {"course": course, "form": form})
