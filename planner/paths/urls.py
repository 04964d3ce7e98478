"""The path comparison's page and API (/planner/paths/), under the planner's URL namespace."""

from __future__ import annotations

from django.urls import path

from planner.paths import views

urlpatterns = [
    path("paths/", views.paths_page, name="paths"),
    path("api/paths/", views.api_paths, name="api_paths"),
]
