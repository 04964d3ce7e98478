"""Skills maps: the learner's (recall strength per skill, and a practice session of the
weakest) and the instructor's view of the cohort's."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from courses.models import Course, Enrollment
from quizzes.models import CourseSkill, RecallSchedule
from quizzes.selectors.course_stats import course_taught_only
from quizzes.selectors.skills import cohort_skills_map, learner_skills_map, skill_items
from quizzes.services.answers import lesson_problem


def _enrolled_course(request: AuthenticatedHttpRequest, course_slug: str) -> Course:
    course = Course.objects.filter(
        slug=course_slug,
        enrollments__user=request.user,
        enrollments__role=Enrollment.Role.LEARNER,
    ).first()
    if course is None:
        raise Http404("No such course among those you are enrolled in.")
    return course


@require_GET
@login_required
def learner_skills(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = _enrolled_course(request, course_slug)
    skills_map = learner_skills_map(learner=request.user, course=course, now=timezone.now())
    return render(request, "quizzes/skills.html", {"course": course, "map": skills_map})


@require_GET
@login_required
def skill_practice(
    request: AuthenticatedHttpRequest, course_slug: str, skill_slug: str
) -> HttpResponse:
    """A practice session of one skill's items, answerable in place as on a lesson page; a
    calculated item draws practice numbers of its own (never the next review's)."""
    course = _enrolled_course(request, course_slug)
    skill = CourseSkill.objects.filter(course=course, slug=skill_slug).first()
    if skill is None:
        raise Http404("No such skill in this course.")
    items = skill_items(course=course, skill=skill)
    scheduled = {
        s.item_id: s
        for s in RecallSchedule.objects.filter(learner=request.user, item__in=items).only(
            "id", "item_id", "due", "reps"
        )
    }
    entries = []
    for item in items:
        schedule = scheduled.get(item.pk)
        reps = schedule.reps if schedule is not None else None
        problem = lesson_problem(learner_id=request.user.pk, item=item, reps=reps)
        entries.append((item, uuid.uuid4(), schedule, problem))
    return render(
        request,
        "quizzes/skill_practice.html",
        {"course": course, "skill": skill, "entries": entries},
    )


@require_GET
@instructor_required
def course_skills(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = course_taught_only(slug=course_slug, user=request.user)
    rows, analysis = cohort_skills_map(course=course)
    return render(
        request,
        "quizzes/course_skills.html",
        {"course": course, "rows": rows, "analysis": analysis},
    )
