"""Request types for views behind login_required (the user is a real User, htmx details attached)."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from accounts.models import User


class AuthenticatedHttpRequest(HttpRequest):
    user: User  # type: ignore[assignment]
    htmx: HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
