"""Reminder pages under /reminders/: the email's signed links and the staff status page."""

from __future__ import annotations

from django.urls import path

from reminders import views

app_name = "reminders"

urlpatterns = [
    path("", views.status, name="status"),
    path("unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
    path("prompt/<str:token>/", views.prompt, name="prompt"),
]
