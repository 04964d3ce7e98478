"""The review card's grade buttons, written in Python: four buttons of a template loop were
about a third of the revealed card's rendering. The same markup and escaping as the loop."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from django import template
from django.utils.safestring import SafeString, mark_safe

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
