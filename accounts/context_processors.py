"""Template context for every page: the signed-in user's role."""

from __future__ import annotations

import time

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from accounts.models import User

_CACHE_ATTRIBUTE = "_recall_is_instructor"
# The role as last looked up, kept in the session: [user id, is instructor, when (epoch s)].
ROLE_SESSION_KEY = "_recall_role"
# The navigation may show a role change this late; access itself is always checked afresh
# (`instructor_required` asks the database on every request), so only links lag behind.
ROLE_LIFETIME_SECONDS = 300


def _session_role(request: HttpRequest, user_id: int, now: float) -> bool | None:
    session = getattr(request, "session", None)
    kept = session.get(ROLE_SESSION_KEY) if session is not None else None
    if not (isinstance(kept, list) and len(kept) == 3 and kept[0] == user_id):
        return None
    if not 0 <= now - kept[2] < ROLE_LIFETIME_SECONDS:
        return None
    return bool(kept[1])


def _is_instructor(request: HttpRequest) -> bool:
    """Staff or a member of the Instructors group: asked once per request at most, and at most
    once every ROLE_LIFETIME_SECONDS per session (the group query cost a full page ~10 %)."""
    cached = getattr(request, _CACHE_ATTRIBUTE, None)
    if cached is None:
        user = getattr(request, "user", None)
        if not (user and user.is_authenticated):
            cached = False
        elif user.is_staff:
            cached = True
        else:
            now = time.time()
            cached = _session_role(request, user.pk, now)
            if cached is None:
                cached = _role_asked_and_kept(request, user, now)
        setattr(request, _CACHE_ATTRIBUTE, cached)
    return cached


def _role_asked_and_kept(request: HttpRequest, user: User, now: float) -> bool:
    """The group query's answer, kept in the request's session when it has one."""
    role = bool(user.is_instructor)
    session = getattr(request, "session", None)
    if session is not None:
        session[ROLE_SESSION_KEY] = [user.pk, role, int(now)]
    return role


def role_remember(*, request: HttpRequest, user: User) -> None:
    """Keep the user's role in the session they just signed in to, which is written anyway: the
    pages after sign-in then ask no group query and write no session."""
    if getattr(request, "session", None) is not None and not user.is_staff:
        _role_asked_and_kept(request, user, time.time())


def roles(request: HttpRequest) -> dict[str, object]:
    # Lazy: an htmx fragment that never reads the role (a review card after a grade) costs no
    # group query; a full page reads it once however many templates test it.
    return {"is_instructor": SimpleLazyObject(lambda: _is_instructor(request))}
