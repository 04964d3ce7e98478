"""Workload card pages (/planner/cards/), under the planner's URL namespace."""

from __future__ import annotations

from django.urls import path

from planner.cards import views

urlpatterns = [
    path("cards/", views.card_list, name="cards"),
    path("cards/new/", views.card_create, name="card_create"),
    path("cards/compare/", views.card_compare, name="cards_compare"),
    path("cards/<int:card_id>/delete/", views.card_delete, name="card_delete"),
]
