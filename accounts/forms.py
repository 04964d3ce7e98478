"""The preferences form: a time-zone picker grouped by region, the learner's hours and a pause."""

from __future__ import annotations

import zoneinfo
from functools import cache
from itertools import groupby
from typing import Any

from django import forms
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from accounts.models import EASY_DAY_LETTERS, User

HOURS = [(h, f"{h:02d}:00") for h in range(24)]
WEEKDAY_FIELDS = (
    ("easy_mon", _("Monday")),
    ("easy_tue", _("Tuesday")),
    ("easy_wed", _("Wednesday")),
    ("easy_thu", _("Thursday")),
    ("easy_fri", _("Friday")),
    ("easy_sat", _("Saturday")),
    ("easy_sun", _("Sunday")),
)
EASY_DAY_CHOICES = [("n", _("Normal")), ("r", _("Reduced")), ("m", _("Minimum"))]

# The IANA areas that name places; the rest of the database's names are aliases kept for old
# systems ("US/Eastern", "Etc/GMT+5", "Factory", "localtime") that no one picks from a list.
TIME_ZONE_REGIONS = (
    "Africa",
    "America",
    "Antarctica",
    "Arctic",
    "Asia",
    "Atlantic",
    "Australia",
    "Europe",
    "Indian",
    "Pacific",
)

type ZoneChoice = tuple[str, str]
type ZoneGroup = tuple[str | Promise, list[ZoneChoice]]


def time_zone_label(name: str) -> str:
    """'America/Argentina/Buenos_Aires' → 'Argentina / Buenos Aires' (the place, not the area)."""
    return " / ".join(part.replace("_", " ") for part in name.split("/")[1:]) or name


@cache
def time_zone_choices() -> list[ZoneGroup]:
    """The geographic zones as <optgroup>s by region, sorted by place; UTC first on its own."""
    zones = sorted(
        (
            name
            for name in zoneinfo.available_timezones()
            if name.split("/")[0] in TIME_ZONE_REGIONS and "/" in name
        ),
        key=lambda name: (name.split("/")[0], time_zone_label(name)),
    )
    grouped = [
        (region, [(name, time_zone_label(name)) for name in names])
        for region, names in groupby(zones, key=lambda name: name.split("/")[0])
    ]
    return [(_("Universal"), [("UTC", "UTC")]), *grouped]


class PreferencesForm(forms.ModelForm):
    time_zone = forms.ChoiceField(
        label=_("Time zone"),
        choices=time_zone_choices,
        help_text=_("Reminders, daily limits and streaks follow your local day."),
    )
    day_start_hour = forms.TypedChoiceField(label=_("My day starts at"), choices=HOURS, coerce=int)
    reminder_hour = forms.TypedChoiceField(
        label=_("Send my recall digest at"), choices=HOURS, coerce=int
    )
    pause_days = forms.IntegerField(
        label=_("Pause reminders for (days)"),
        required=False,
        min_value=0,
        max_value=365,
        help_text=_("0 resumes reminders now. Leave empty to keep the current pause."),
    )

    class Meta:
        model = User
        fields = [
            "display_name",
            "time_zone",
            "day_start_hour",
            "reminders_enabled",
            "reminder_hour",
            "review_shortcuts_enabled",
            "load_balancer_enabled",
        ]
        help_texts = {
            "load_balancer_enabled": _(
                "Each review goes to the day with fewer reviews within its usual range."
            ),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        letters = self.instance.easy_days if self.instance else "nnnnnnn"
        for index, (name, label) in enumerate(WEEKDAY_FIELDS):
            self.fields[name] = forms.ChoiceField(
                label=_("Easy days: %(day)s") % {"day": label},
                choices=EASY_DAY_CHOICES,
                required=False,
                initial=letters[index] if len(letters) == 7 else "n",
            )
        current = self.instance.time_zone if self.instance else ""
        known = {name for _region, zones in time_zone_choices() for name, _label in zones}
        if current and current not in known:
            # An older alias saved before the list was grouped stays selectable, not silently lost.
            field = self.fields["time_zone"]
            assert isinstance(field, forms.ChoiceField)
            field.choices = [(_("Current"), [(current, current)]), *time_zone_choices()]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        # A day the form left out keeps its setting.
        saved = self.instance.easy_days if len(self.instance.easy_days or "") == 7 else "n" * 7
        letters = [
            str(cleaned.pop(name, "") or saved[index])
            for index, (name, _label) in enumerate(WEEKDAY_FIELDS)
        ]
        cleaned["easy_days"] = "".join(
            letter if letter in EASY_DAY_LETTERS else "n" for letter in letters
        )
        return cleaned
