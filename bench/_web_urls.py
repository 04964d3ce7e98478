"""The site's URLs plus the benchmark's reference: a logged-in view that returns "ok" through the
same middleware (session, user, CSRF, CSP, htmx). Only bench/web.py's server loads this."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.http import require_GET

from config.urls import urlpatterns as site_urlpatterns


@require_GET
@login_required
def bare(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [path("bench/bare/", bare, name="bench_bare"), *site_urlpatterns]
