"""The review card's grade buttons, written in Python: four buttons of a template loop were
about a third of the revealed card's rendering. The same markup and escaping as the loop. And
`fixed_url`, the review panel's argument-less URLs reversed once per process: five {% url %}
tags were a third of the panel's rendering after a grade."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from django import template
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from quizzes.selectors.preview import GradePreview

register = template.Library()


@register.simple_tag
def grade_buttons(previews: Iterable[GradePreview], shortcuts: bool) -> SafeString:
    """One submit button per rating: its key (when shortcuts are on), label and interval."""
    buttons = []
    for p in previews:
        rating = int(p.rating)
        key = f"<kbd>{rating}</kbd>" if shortcuts else ""
        buttons.append(
            f'<button type="submit" name="rating" value="{rating}" class="grade grade-{rating}" '
            f'data-shortcut="grade-{rating}" data-testid="grade-{rating}">\n'
            f"{key}\n"
            f'<span class="grade-label">{escape(str(p.label))}</span>\n'
            f'<span class="grade-interval">{escape(str(p.interval))}</span>\n'
            "</button>\n"
        )
    return mark_safe("".join(buttons))


_FIXED_URLS: dict[tuple[object, ...], str] = {}


@register.simple_tag
def fixed_url(name: str) -> str:
    """What {% url name %} gives for a URL without arguments, reversed once per script prefix,
    URLconf and language (what reverse() depends on) and kept. Escaped like {% url %}'s, as a
    simple tag's result is."""
    urlconf = get_urlconf()
    key = (name, get_script_prefix(), urlconf, get_language())
    if key not in _FIXED_URLS:
        _FIXED_URLS[key] = reverse(name, urlconf=urlconf)
    return _FIXED_URLS[key]
