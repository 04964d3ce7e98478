"""The statistics pages' per-row lists and charts, written in Python: the strength table's rows,
the recently reviewed items and each bar chart's figure and table. A template loop cost about 60 µs a module and 100 µs an item, most of
the page's rendering; these write the same markup with the same filters and escaping."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from html import escape

from django import template
from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils.dates import MONTHS_3
from django.utils.formats import get_format
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator
from django.utils.timezone import get_current_timezone

from quizzes.charts import BarChart, figure_html
from quizzes.selectors.history import ReviewedItem
from quizzes.selectors.strength import ModuleStrength

register = template.Library()

_NOT_STARTED = '<span class="muted">Not started: answer its lessons\' items</span>'


_PLACES = {places: Decimal(1).scaleb(-places) for places in (2, 3)}


def fixed_places(value: float, places: int, decimal_separator: str) -> str:
    """`floatformat:places` of a number in [0, 1000), as the filter writes it (its Decimal of the
    float's repr rounded half up, the locale's separator, no grouping below a thousand) without
    its cost per call; other numbers go to the filter itself."""
    if not 0 <= value < 1000 or places not in _PLACES:
        return str(floatformat(value, places))
    rounded = Decimal(str(value)).quantize(_PLACES[places], ROUND_HALF_UP)
    return format(rounded, "f").replace(".", decimal_separator)


def _recall_cell(mean: float | None, separator: str) -> str:
    if mean is None:
        return _NOT_STARTED
    # Digits only (safe as they are); the percentage as widthratio rounds it.
    return (
        '<meter min="0" max="1" low="0.7" high="0.85" optimum="1" '
        f'value="{fixed_places(mean, 3, separator)}">{fixed_places(mean, 2, separator)}</meter> '
        f"{round(float(mean) / 1.0 * 100)}%"
    )


@register.simple_tag
def strength_rows(modules: Iterable[ModuleStrength]) -> SafeString:
    """One table row per module: title and course, items in reviews, recall now."""
    separator = str(get_format("DECIMAL_SEPARATOR"))
    return mark_safe(
        "".join(
            f'<tr>\n<th scope="row">{escape(str(m.module.title))} <span class="help">'
            f"{escape(str(m.module.course.title))}</span></th>\n"
            f'<td data-label="Items in reviews">{m.scheduled} of {m.items}</td>\n'
            f'<td data-label="Recall now">{_recall_cell(m.mean_recall, separator)}</td>\n</tr>\n'
            for m in modules
        )
    )


# An id no item has: the history URL is reversed once per list and each item's id put in its
# place (the int converter writes an id as str(id), so this is what reverse() gives for it).
_SENTINEL = 987_654_321_012


class _DayMonth:
    """The `date:"j M"` filter of aware moments, in the time zone current when made: the zone
    and each month's name looked up once per list rather than once per item."""

    def __init__(self) -> None:
        self._zone = get_current_timezone()
        self._months: dict[int, str] = {}

    def __call__(self, moment: datetime) -> str:
        local = moment.astimezone(self._zone)
        name = self._months.get(local.month)
        if name is None:
            name = self._months[local.month] = str(MONTHS_3[local.month]).title()
        return f"{local.day} {name}"


@register.simple_tag
def recent_items(entries: Iterable[ReviewedItem]) -> SafeString:
    """One list item per recently reviewed item: its history link, its prompt cut to 14 words
    and the day of its last review (in the learner's zone)."""
    before, after = reverse("quizzes:item_history", args=[_SENTINEL]).split(str(_SENTINEL))
    day_month = _DayMonth()
    return mark_safe(
        "".join(
            f'<li><a href="{escape(f"{before}{int(e.item_id)}{after}")}">'
            f"{escape(Truncator(e.prompt).words(14, truncate=' …'))}</a> "
            f'<span class="help">{escape(day_month(e.last_reviewed_at))}</span></li>\n'
            for e in entries
        )
    )


@register.simple_tag
def chart_figure(chart: BarChart, chart_id: str, empty_text: str = "") -> SafeString:
    """A bar chart's figure and figures table (charts.figure_html)."""
    return figure_html(chart, chart_id, empty_text)
