"""The accessibility statement is public, linked from every page, and says how to report."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_the_statement_is_public_and_linked_from_every_page(client: Client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEFAULT_FROM_EMAIL = "Recall <help@recall.example>"
    page = client.get(reverse("accessibility"))
    assert page.status_code == 200
    text = page.content.decode()
    for heading in ("What conforms", "Known exceptions", "Report a problem"):
        assert heading in text
    assert 'href="mailto:help@recall.example"' in text
    assert f'href="{reverse("accessibility")}"' in client.get(reverse("home")).content.decode()
