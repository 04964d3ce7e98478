"""The digest's signed links (recall prompt, one-click unsubscribe) resist tampering, forging,
replay and expiry; a key once in the code forges nothing (issue 12)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import signing
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from quizzes.models import ReviewLog
from tests.security.conftest import World

pytestmark = pytest.mark.django_db

# The development key settings.py carried before issue 12 (git history): public, so useless.
OLD_CODE_KEY = "dev-only-insecure-key-never-use-in-production-0123456789"


def _links():  # type: ignore[no-untyped-def]
    # Lazily imported: the links moved from quizzes to the reminders app.
    from reminders import links

    return links


def _tampered(token: str) -> list[str]:
    """The token with one character changed at its start, its middle and its end."""
    out = []
    for i in (0, len(token) // 2, len(token) - 1):
        swap = "A" if token[i] != "A" else "B"
        out.append(token[:i] + swap + token[i + 1 :])
    return out


def test_tampered_or_forged_unsubscribe_links_unsubscribe_nobody(world: World) -> None:
    links = _links()
    other_id = world.other.pk
    forged = [
        *_tampered(world.unsubscribe_token),
        signing.dumps({"u": other_id}, salt=links.UNSUBSCRIBE_SALT, key=OLD_CODE_KEY),
        signing.dumps({"u": other_id}, salt=links.PROMPT_SALT),  # another link's purpose
        signing.dumps({"u": other_id}),
        "",
        "x" * 5000,
    ]
    client = Client()
    for token in forged:
        if not token:
            continue
        response = client.post(reverse("reminders:unsubscribe", args=[token]))
        assert response.status_code == 400, token
    world.learner.refresh_from_db()
    world.other.refresh_from_db()
    assert world.learner.reminders_enabled and world.other.reminders_enabled


def test_tampered_forged_and_expired_prompt_links_grade_nothing(world: World) -> None:
    links = _links()
    data = {"rating": "3", "card_token": str(world.schedule.card_token)}
    client = Client()
    digest_id = signing.loads(world.prompt_token, salt=links.PROMPT_SALT)["d"]
    forged = [
        *_tampered(world.prompt_token),
        signing.dumps(
            {"d": digest_id, "s": world.schedule.pk}, salt=links.PROMPT_SALT, key=OLD_CODE_KEY
        ),
        signing.dumps({"d": digest_id, "s": world.schedule.pk}, salt=links.UNSUBSCRIBE_SALT),
    ]
    for token in forged:
        url = reverse("reminders:prompt", args=[token])
        assert client.get(url).status_code == 400, token
        assert client.post(url, data).status_code == 400, token
    url = reverse("reminders:prompt", args=[world.prompt_token])
    with time_machine.travel(timezone.now() + links.PROMPT_MAX_AGE + timedelta(minutes=1)):
        assert client.get(url).status_code == 400
        assert client.post(url, data).status_code == 400
    assert not ReviewLog.objects.exists()


def test_a_replayed_prompt_grade_counts_once(world: World) -> None:
    url = reverse("reminders:prompt", args=[world.prompt_token])
    data = {"rating": "3", "card_token": str(world.schedule.card_token)}
    client = Client()

    first = client.post(url, data)
    second = client.post(url, data)

    assert first.status_code == second.status_code == 200
    assert ReviewLog.objects.filter(learner=world.learner).count() == 1


def test_an_expired_unsubscribe_link_changes_nothing(world: World) -> None:
    links = _links()
    url = reverse("reminders:unsubscribe", args=[world.unsubscribe_token])
    with time_machine.travel(timezone.now() + links.UNSUBSCRIBE_MAX_AGE + timedelta(days=1)):
        assert Client().post(url).status_code == 400
    world.learner.refresh_from_db()
    assert world.learner.reminders_enabled
