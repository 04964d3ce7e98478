"""The planner: the capacity calculator, its JSON API and workload cards (the capstone is separate)."""

from __future__ import annotations

from django.urls import path

from planner.views import api, calculator, cards

app_name = "planner"

urlpatterns = [
    path("", calculator.calculator, name="calculator"),
    path("api/serving/", api.estimate, {"kind": "serving"}, name="api_serving"),
    path("api/training/", api.estimate, {"kind": "training"}, name="api_training"),
    path("api/batch/", api.estimate, {"kind": "batch"}, name="api_batch"),
    path("cards/", cards.card_list, name="cards"),
    path("cards/new/", cards.card_create, name="card_create"),
    path("cards/compare/", cards.card_compare, name="cards_compare"),
    path("cards/<int:card_id>/delete/", cards.card_delete, name="card_delete"),
]
