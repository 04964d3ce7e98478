"""The review area (/review/): the session, lesson answers, statistics and course settings."""

from django.urls import path

from quizzes.views import (
    answers,
    calculated,
    item_analysis,
    retention,
    review,
    skills,
    stats,
    week,
)

app_name = "quizzes"

urlpatterns = [
    path("", review.session, name="session"),
    path("grade/", review.grade, name="grade"),
    path("undo/", review.undo, name="undo"),
    path("items/<int:item_id>/answer/", answers.answer, name="answer"),
    path("items/<int:item_id>/reveal/", answers.reveal, name="answer_reveal"),
    path("items/<int:item_id>/history/", stats.item_history, name="item_history"),
    path("items/<int:item_id>/unsuspend/", stats.item_unsuspend, name="item_unsuspend"),
    path("stats/", stats.learner_stats_view, name="stats"),
    path("week/", week.week, name="week"),
    path("week/break/", week.week_break, name="week_break"),
    path("teaching/<slug:course_slug>/", stats.course_stats, name="course_stats"),
    path(
        "teaching/<slug:course_slug>/settings/", retention.course_settings, name="course_settings"
    ),
    path(
        "teaching/<slug:course_slug>/calculated/",
        calculated.course_calculated,
        name="course_calculated",
    ),
    path(
        "teaching/<slug:course_slug>/parameters/",
        retention.course_parameters,
        name="course_parameters",
    ),
    path(
        "teaching/<slug:course_slug>/parameters/reschedule/",
        retention.course_reschedule,
        name="course_reschedule",
    ),
    path(
        "teaching/<slug:course_slug>/items/",
        item_analysis.course_item_analysis,
        name="course_item_analysis",
    ),
    path("teaching/<slug:course_slug>/skills/", skills.course_skills, name="course_skills"),
    path("skills/<slug:course_slug>/", skills.learner_skills, name="skills"),
    path(
        "skills/<slug:course_slug>/<slug:skill_slug>/",
        skills.skill_practice,
        name="skill_practice",
    ),
    path("retention/<slug:course_slug>/", retention.learner_retention, name="retention"),
]
