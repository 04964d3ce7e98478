"""The preferences page: the time-zone list, and a pause shown with its end and undone."""

from __future__ import annotations

from datetime import date

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from accounts.forms import PreferencesForm, time_zone_choices
from accounts.models import User

pytestmark = pytest.mark.django_db


def _zones() -> list[str]:
    return [name for _region, zones in time_zone_choices() for name, _label in zones]


def test_time_zones_are_places_grouped_by_region() -> None:
    zones = _zones()
    regions = [str(region) for region, _zones in time_zone_choices()]
    assert regions[0] == "Universal" and {"Africa", "America", "Europe", "Pacific"} <= set(regions)
    assert not {"Factory", "localtime", "US/Eastern", "Etc/GMT+5", "GMT"} & set(zones)
    assert "Asia/Tokyo" in zones and "UTC" in zones
    america = dict(time_zone_choices())["America"]
    assert ("America/Argentina/Buenos_Aires", "Argentina / Buenos Aires") in america


def test_a_saved_alias_stays_selected(learner: User) -> None:
    learner.time_zone = "US/Eastern"
    form = PreferencesForm(instance=learner)
    assert 'value="US/Eastern" selected' in str(form["time_zone"])


@time_machine.travel("2026-03-10 12:00Z")
def test_preferences_show_a_running_pause_and_resume_it(client: Client, learner: User) -> None:
    learner.reminders_paused_until = date(2026, 3, 12)
    learner.save()
    client.force_login(learner)
    body = client.get(reverse("preferences")).content.decode()
    assert "Reminders paused until Thursday 12 March 2026" in body

    response = client.post(reverse("preferences"), {"action": "resume"}, follow=True)
    assert "Reminders resumed" in response.content.decode()
    assert "Reminders paused until" not in response.content.decode()
    learner.refresh_from_db()
    assert learner.reminders_paused_until is None


@time_machine.travel("2026-03-10 12:00Z")
def test_a_pause_that_ended_is_not_shown(client: Client, learner: User) -> None:
    learner.reminders_paused_until = date(2026, 3, 9)
    learner.save()
    client.force_login(learner)
    assert "Reminders paused until" not in client.get(reverse("preferences")).content.decode()
