"""Root URLs: one include per app (the planner and quizzes have two areas each)."""

from django.contrib import admin
from django.urls import include, path

from accounts import views as account_views
from config import health

urlpatterns = [
    path("", account_views.home, name="home"),
    path("dashboard/", account_views.dashboard, name="dashboard"),
    path("accounts/preferences/", account_views.preferences, name="preferences"),
    path("accounts/", include("allauth.urls")),
    path("courses/", include("courses.urls")),
    path("review/", include("quizzes.urls")),
    path("reminders/", include("reminders.urls")),
    path("planner/", include("planner.urls")),
    path("capstone/", include("planner.capstone.urls")),
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
]
