from __future__ import annotations

from django.http import HttpRequest


def roles(request: HttpRequest) -> dict[str, bool]:
    user = getattr(request, "user", None)
    is_instructor = bool(user and user.is_authenticated and (user.is_staff or user.is_instructor))
    return {"is_instructor": is_instructor}
