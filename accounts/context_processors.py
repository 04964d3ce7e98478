"""Template context for every page: the signed-in user's role."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

_CACHE_ATTRIBUTE = "_recall_is_instructor"


def _is_instructor(request: HttpRequest) -> bool:
    """Staff or a member of the Instructors group, looked up at most once per request."""
    cached = getattr(request, _CACHE_ATTRIBUTE, None)
    if cached is None:
        user = getattr(request, "user", None)
        cached = bool(user and user.is_authenticated and (user.is_staff or user.is_instructor))
        setattr(request, _CACHE_ATTRIBUTE, cached)
    return cached


def roles(request: HttpRequest) -> dict[str, object]:
    # Lazy: an htmx fragment that never reads the role (a review card after a grade) costs no
    # group query; a full page reads it once however many templates test it.
    return {"is_instructor": SimpleLazyObject(lambda: _is_instructor(request))}
