"""The measured-result page and API (/planner/measured/), under the planner's URL namespace."""

from __future__ import annotations

from django.urls import path

from planner.measured import views

urlpatterns = [
    path("measured/", views.measured_page, name="measured"),
    path("measured/compare/", views.measured_compare, name="measured_compare"),
    path("api/measured/", views.api_measured, name="api_measured"),
]
