"""Learner pages of the capstone: the list, the worksheet (autosaved), submit, a version's page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from courses.models import Course
from planner.capstone.comparison_label import recommended_label
from planner.capstone.forms import WorksheetForm
from planner.capstone.peer_selectors import peer_settings_of
from planner.capstone.selectors import (
    capstone_courses_for,
    capstone_overview_for,
    released_grade_for,
    submission_cards,
    submission_content_sections,
    submissions_for_learner,
    worksheet_for,
)
from planner.capstone.services import (
    SubmissionNotAllowed,
    worksheet_attach_comparison,
    worksheet_autosave,
    worksheet_can_submit,
    worksheet_submit,
)
from planner.models import CapstoneWorksheet
from planner.paths.runs import comparison_query

WORKSHEET_TEMPLATE = "planner/capstone/worksheet.html"


@require_GET
@login_required
def capstone_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    rows = capstone_overview_for(learner=request.user)
    return render(request, "planner/capstone/list.html", {"rows": rows})


def _worksheet_page(
    request: AuthenticatedHttpRequest,
    course_slug: str,
    form: WorksheetForm | None = None,
    *,
    draft_saved: bool = False,
) -> HttpResponse:
    """The worksheet; with a bound form, its errors (draft_saved: saved, but not submitted)."""
    course = get_object_or_404(capstone_courses_for(learner=request.user), slug=course_slug)
    # A GET writes nothing: before the first save the page shows an unsaved, empty draft.
    worksheet = worksheet_for(learner=request.user, course=course) or CapstoneWorksheet(
        learner=request.user, course=course
    )
    form = form or WorksheetForm(instance=worksheet, learner=request.user)
    can_submit, submit_blocked_reason = worksheet_can_submit(worksheet=worksheet)
    context = {
        "course": course,
        "worksheet": worksheet,
        "form": form,
        "can_submit": can_submit,
        "submit_blocked_reason": submit_blocked_reason,
        "submissions": worksheet.submissions.order_by("-version") if worksheet.pk else [],
        "draft_saved": draft_saved,
        # Worked out from the stored comparison, so one attached before the label was stored
        # reads the same.
        "comparison_label": recommended_label(worksheet.paths_comparison),
    }
    return render(request, WORKSHEET_TEMPLATE, context, status=400 if form.errors else 200)


def _posted_worksheet(
    request: AuthenticatedHttpRequest, course_slug: str
) -> tuple[Course, CapstoneWorksheet, WorksheetForm]:
    """The learner's draft for the course and the worksheet form bound to the POST. A first save
    gets an unsaved draft: only a valid form writes it (worksheet_autosave), a refused one
    leaves nothing behind."""
    course = get_object_or_404(capstone_courses_for(learner=request.user), slug=course_slug)
    draft = worksheet_for(learner=request.user, course=course) or CapstoneWorksheet(
        learner=request.user, course=course
    )
    return course, draft, WorksheetForm(request.POST, instance=draft, learner=request.user)


def _autosave(draft: CapstoneWorksheet, form: WorksheetForm) -> CapstoneWorksheet | None:
    """Save the valid form into the draft; None (with the errors on the form) when it is not."""
    if not form.is_valid():
        return None
    try:
        return worksheet_autosave(
            worksheet=draft,
            data=form.cleaned_data,
            workload_cards=form.cleaned_data["workload_cards"],
            measured_result=form.cleaned_data.get("measured_result") or "",
        )
    except ValidationError as exc:
        form.add_error(None, exc)
        return None


@require_GET
@login_required
def worksheet(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    return _worksheet_page(request, course_slug)


@require_POST
@login_required
def worksheet_save(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    """Autosave (htmx, answers with the "Saved at …" status) or the Save draft button."""
    course, draft, form = _posted_worksheet(request, course_slug)
    saved = _autosave(draft, form)
    if request.htmx:
        return render(
            request,
            f"{WORKSHEET_TEMPLATE}#save_status",
            {"worksheet": saved or draft, "form": form, "saved": saved is not None},
        )
    if saved is None:
        return _worksheet_page(request, course_slug, form)
    messages.success(request, _("Draft saved."))
    return redirect("capstone:worksheet", course_slug=course.slug)


@require_POST
@login_required
def worksheet_submit_view(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    """Save what is on the page, then freeze it as a new submitted version."""
    course, draft, form = _posted_worksheet(request, course_slug)
    if _autosave(draft, form) is None:
        return _worksheet_page(request, course_slug, form)
    try:
        submission = worksheet_submit(worksheet=draft, now=timezone.now())
    except SubmissionNotAllowed as exc:
        messages.error(request, str(exc))
        return redirect("capstone:worksheet", course_slug=course.slug)
    except ValidationError as exc:
        form.add_error(None, exc)
        return _worksheet_page(request, course_slug, form, draft_saved=True)
    messages.success(request, _("Version %(version)d submitted.") % {"version": submission.version})
    return redirect("capstone:submission", submission_id=submission.pk)


@require_GET
@login_required
def submission_detail(request: AuthenticatedHttpRequest, submission_id: int) -> HttpResponse:
    submission = get_object_or_404(submissions_for_learner(learner=request.user), pk=submission_id)
    grade = released_grade_for(submission=submission)
    context = {
        "submission": submission,
        "sections": submission_content_sections(submission.content),
        "cards": submission_cards(submission),
        "check": submission.check_result,
        "grade": grade,
        "scores": list(grade.scores.all()) if grade else [],
        "peer_settings": peer_settings_of(course=submission.course),
    }
    return render(request, "planner/capstone/submission.html", context)


@require_POST
@login_required
def attach_comparison(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The comparison page's "Attach to my capstone": the comparison's link onto the learner's
    worksheet (the one course they can write a capstone in, or the course they pick here)."""
    # Only our own page's address goes back into a page (whatever was posted).
    link = f"{reverse('planner:paths')}?{comparison_query(request.POST.get('link', '')[:4000])}"
    courses = capstone_courses_for(learner=request.user)
    slug = request.POST.get("course", "")
    if slug:
        course = get_object_or_404(courses, slug=slug)
    else:
        choices = list(courses[:50])
        if len(choices) != 1:
            return render(
                request,
                "planner/capstone/attach.html",
                {"courses": choices, "link": link},
                status=200 if choices else 400,
            )
        course = choices[0]
    try:
        worksheet = worksheet_attach_comparison(learner=request.user, course=course, link=link)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("capstone:worksheet", course_slug=course.slug)
    label = worksheet.paths_comparison.get("recommended_label")
    messages.success(
        request,
        _("Comparison attached: it recommends %(label)s.") % {"label": label}
        if label
        else _("Comparison attached: no path in it meets every target."),
    )
    return redirect("capstone:worksheet", course_slug=course.slug)
