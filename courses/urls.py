"""Course URLs under /courses/. Teaching pages come first so no course slug can shadow them."""

from __future__ import annotations

from django.urls import path

from courses import views

app_name = "courses"

urlpatterns = [
    path("", views.catalogue, name="catalogue"),
    path("teaching/", views.teaching, name="teaching"),
    path("teaching/<slug:course_slug>/", views.teaching_course, name="teaching_course"),
    path("<slug:course_slug>/", views.outline, name="outline"),
    path("<slug:course_slug>/enroll/", views.enroll, name="enroll"),
    path("<slug:course_slug>/resume/", views.resume, name="resume"),
    path("<slug:course_slug>/<slug:lesson_slug>/", views.lesson, name="lesson"),
    path("<slug:course_slug>/<slug:lesson_slug>/complete/", views.complete, name="complete"),
    path("<slug:course_slug>/<slug:lesson_slug>/visit/", views.visit, name="visit"),
]
