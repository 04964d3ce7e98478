"""Learner pages (catalogue, outline, lesson, enrol, complete, resume) and the teaching pages."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from courses import selectors
from courses.lesson_panels import lesson_panels_render
from courses.models import Course, Enrollment
from courses.selectors import LessonPage
from courses.services.progress import enrollment_create, lesson_complete, lesson_visit

LEARNERS_PER_PAGE = 50


def _course_and_enrollment(
    request: AuthenticatedHttpRequest, course_slug: str
) -> tuple[Course, Enrollment | None]:
    """The course the user may see (else 404) and their enrollment in it, if any."""
    course = selectors.course_for_learner(slug=course_slug, user=request.user)
    return course, selectors.enrollment_for(course=course, user=request.user)


def _lesson_context(
    request: AuthenticatedHttpRequest, course: Course, enrollment: Enrollment, lesson_slug: str
) -> dict[str, Any]:
    page = selectors.lesson_page_for(course=course, user=request.user, lesson_slug=lesson_slug)
    return {"course": course, "enrollment": enrollment, "page": page, "lesson": page.lesson}


@require_GET
@login_required
def catalogue(request: AuthenticatedHttpRequest) -> HttpResponse:
    courses = selectors.courses_for_catalogue(user=request.user)
    return render(request, "courses/catalogue.html", {"courses": courses})


@require_GET
@login_required
def outline(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course, enrollment = _course_and_enrollment(request, course_slug)
    progress = selectors.course_progress_for(course=course, user=request.user)
    return render(
        request,
        "courses/outline.html",
        {"course": course, "enrollment": enrollment, "progress": progress},
    )


@require_POST
@login_required
def enroll(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = selectors.course_for_learner(slug=course_slug, user=request.user)
    enrollment_create(course=course, user=request.user)
    messages.success(request, _("You are enrolled in %(course)s.") % {"course": course.title})
    return redirect("courses:resume", course_slug=course.slug)


@require_GET
@login_required
def resume(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course, enrollment = _course_and_enrollment(request, course_slug)
    if enrollment is None:
        return redirect(course)
    progress = selectors.course_progress_for(course=course, user=request.user)
    lesson = progress.resume_lesson(enrollment.last_lesson_id)
    return redirect(lesson or course)


@require_GET
@login_required
def lesson(request: AuthenticatedHttpRequest, course_slug: str, lesson_slug: str) -> HttpResponse:
    course, enrollment = _course_and_enrollment(request, course_slug)
    if enrollment is None:
        messages.info(request, _("Enroll in the course to open its lessons."))
        return redirect(course)
    context = _lesson_context(request, course, enrollment, lesson_slug)
    page: LessonPage = context["page"]
    # The visit is recorded by the page's htmx POST on load (`visit`): a GET writes nothing.
    context["panels"] = lesson_panels_render(request=request, lesson=page.lesson)
    return render(request, "courses/lesson.html", context)


@require_POST
@login_required
def visit(request: AuthenticatedHttpRequest, course_slug: str, lesson_slug: str) -> HttpResponse:
    """Remember the lesson for "resume" and start its progress; posted by the page as it loads."""
    course, enrollment = _course_and_enrollment(request, course_slug)
    if enrollment is None:
        raise Http404(_("Enroll in the course to open its lessons."))
    page = selectors.lesson_page_for(course=course, user=request.user, lesson_slug=lesson_slug)
    lesson_visit(enrollment=enrollment, lesson=page.lesson, started=page.entry.started)
    return HttpResponse(status=204)


@require_POST
@login_required
def complete(request: AuthenticatedHttpRequest, course_slug: str, lesson_slug: str) -> HttpResponse:
    course, enrollment = _course_and_enrollment(request, course_slug)
    if enrollment is None:
        return redirect(course)
    context = _lesson_context(request, course, enrollment, lesson_slug)
    page: LessonPage = context["page"]
    lesson_complete(learner=request.user, lesson=page.lesson)
    page.entry.completed = True
    if request.htmx:
        return render(request, "courses/lesson.html#completion", context)
    return redirect(page.lesson)


@require_GET
@instructor_required
def teaching(request: AuthenticatedHttpRequest) -> HttpResponse:
    courses = selectors.courses_taught_by(user=request.user)
    return render(request, "courses/teaching.html", {"courses": courses})


@require_GET
@instructor_required
def teaching_course(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = selectors.course_taught_by(slug=course_slug, user=request.user)
    learners = Paginator(selectors.learner_progress_for_course(course=course), LEARNERS_PER_PAGE)
    return render(
        request,
        "courses/teaching_course.html",
        {"course": course, "learners": learners.get_page(request.GET.get("page"))},
    )
