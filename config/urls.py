"""Root URLs: the top pages (home, dashboard), then one include per app."""

from allauth.account.decorators import secure_admin_login
from django.contrib import admin
from django.urls import include, path

from accounts import views as account_views
from config import health
from home import views as home_views

# The admin has no login form of its own: it sends people to the site's login, whose rate limits
# (and verified email) then hold for staff accounts too.
admin.site.login = secure_admin_login(admin.site.login)  # type: ignore[method-assign]

urlpatterns = [
    path("", home_views.home, name="home"),
    path("dashboard/", home_views.dashboard, name="dashboard"),
    path("accessibility/", home_views.accessibility, name="accessibility"),
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
