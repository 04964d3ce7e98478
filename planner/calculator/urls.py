"""The calculator page and its JSON API (/planner/), under the planner's URL namespace."""

from __future__ import annotations

from django.urls import path

from planner.calculator import views

urlpatterns = [
    path("", views.calculator, name="calculator"),
    path("api/serving/", views.api_estimate, {"kind": "serving"}, name="api_serving"),
    path("api/training/", views.api_estimate, {"kind": "training"}, name="api_training"),
    path("api/batch/", views.api_estimate, {"kind": "batch"}, name="api_batch"),
]
