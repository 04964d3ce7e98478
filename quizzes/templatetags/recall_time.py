"""When something happens, said the way a learner reads it: "now", "in under a minute"."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timeuntil
from django.utils.translation import gettext as _

register = template.Library()


@register.filter
def due_phrase(moment: datetime | None, now: datetime | None = None) -> str:
    """ "now" when `moment` has come, "in under a minute" before a whole minute is left
    (where `timeuntil` would say "0 minutes"), else "in 5 minutes", "in 2 days"."""
    if moment is None:
        return ""
    now = now or timezone.now()
    left = moment - now
    if left <= timedelta(0):
        return _("now")
    if left < timedelta(minutes=1):
        return _("in under a minute")
    return _("in %(time)s") % {"time": timeuntil(moment, now)}
