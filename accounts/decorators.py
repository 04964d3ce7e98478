"""View guards for roles. Course scoping happens in the selectors; this only checks the role."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse


def instructor_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous users go to the login page; signed-in learners get 403."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not (request.user.is_staff or getattr(request.user, "is_instructor", False)):
            raise PermissionDenied("Instructors only.")
        return view(request, *args, **kwargs)

    return wrapped
