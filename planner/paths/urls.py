"""The path comparison's pages and API (/planner/paths/), under the planner's URL namespace."""

from __future__ import annotations

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
