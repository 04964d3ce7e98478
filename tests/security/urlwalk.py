"""Every URL of the site, walked from the URLconf, with its parameters filled from a World."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern, RoutePattern

from tests.security.conftest import World

PARAMETER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")


@dataclass(frozen=True)
class Route:
    route: str  # the pattern as written, "capstone/grading/<int:submission_id>/"
    name: str  # "capstone:grade" (or the route when unnamed)

    def parameters(self) -> list[str]:
        return [m["name"] for m in PARAMETER.finditer(self.route)]


def routes() -> Iterator[Route]:
    """Every route pattern of the URLconf; regex patterns (the admin's app index) are left out."""
    yield from _walk(get_resolver().url_patterns, prefix="", namespace="")


def _walk(patterns: list[object], *, prefix: str, namespace: str) -> Iterator[Route]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            if isinstance(entry.pattern, RegexPattern) and entry.pattern.regex.groups:
                continue
            ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            part = str(entry.pattern).lstrip("^").rstrip("$")
            yield from _walk(entry.url_patterns, prefix=prefix + part, namespace=ns)
        elif isinstance(entry, URLPattern):
            if not isinstance(entry.pattern, RoutePattern):
                continue
            route = prefix + str(entry.pattern)
            yield Route(route=route, name=f"{namespace}{entry.name}" if entry.name else route)


def fill(route: Route, world: World) -> str | None:
    """The route's path with each parameter naming the world's object; None if one can't be named."""
    values = {
        "course_slug": world.course.slug,
        "lesson_slug": world.lesson.slug,
        "submission_id": world.submission.pk,
        "criterion_id": world.criterion.pk,
        "item_id": world.item.pk,
        "card_id": world.card.pk,
        "skill_slug": "memory-fit",
        # allauth's emailed keys: a made-up key is what a scanner or a guesser sends.
        "key": "made-up-key",
        "uidb36": "1",
        # A peer assessment nobody holds: every visitor is refused (the owner's page and another
        # learner's 404 are tests/planner/capstone/test_peer_views.py's).
        "assessment_id": 999_999_999,
    }
    if "unsubscribe" in route.route:
        values["token"] = world.unsubscribe_token
    elif "prompt" in route.route:
        values["token"] = world.prompt_token
    if "object_id" in route.parameters():
        object_id = _admin_object_id(route)
        if object_id is not None:
            values["object_id"] = object_id
    missing = [p for p in route.parameters() if p not in values]
    if missing:
        return None
    return "/" + PARAMETER.sub(lambda m: str(values[m["name"]]), route.route)


def _admin_object_id(route: Route) -> int | None:
    """An admin object page ("admin/<app>/<model>/<id>/...") names the model's first row."""
    parts = route.route.split("/")
    if len(parts) < 4 or parts[0] != "admin":
        return None
    try:
        model = apps.get_model(parts[1], parts[2])
    except LookupError:
        return None
    return model._default_manager.order_by("pk").values_list("pk", flat=True).first()
