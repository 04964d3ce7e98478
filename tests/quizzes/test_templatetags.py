"""How a due time is said: never "0 minutes"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from quizzes.templatetags.recall_time import due_phrase

NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("offset", "said"),
    [
        (timedelta(seconds=-5), "now"),
        (timedelta(0), "now"),
        (timedelta(seconds=1), "in under a minute"),
        (timedelta(seconds=59), "in under a minute"),
        (timedelta(seconds=60), "in 1\xa0minute"),
        (timedelta(minutes=10, seconds=30), "in 10\xa0minutes"),
        (timedelta(days=2, hours=3), "in 2\xa0days, 3\xa0hours"),
    ],
)
def test_due_phrase(offset, said):
    """Where `timeuntil` says "0 minutes" (under a minute, or past), the learner reads "in under
    a minute" or "now"."""
    assert due_phrase(NOW + offset, NOW) == said


def test_due_phrase_of_nothing_is_empty():
    assert due_phrase(None, NOW) == ""


# The loops the statistics page had before its rows were written in Python: the reference.
_OLD_STRENGTH = """{% for m in modules %}
          <tr>
            <th scope="row">{{ m.module.title }} <span class="help">{{ m.module.course.title }}</span></th>
            <td data-label="Items in reviews">{{ m.scheduled }} of {{ m.items }}</td>
            <td data-label="Recall now">{% if m.mean_recall is not None %}<meter min="0" max="1" low="0.7" high="0.85" optimum="1" value="{{ m.mean_recall|floatformat:3 }}">{{ m.mean_recall|floatformat:2 }}</meter> {% widthratio m.mean_recall 1 100 %}%{% else %}<span class="muted">Not started: answer its lessons' items</span>{% endif %}</td>
          </tr>
        {% endfor %}"""
_OLD_RECENT = """{% for entry in recent %}
      <li><a href="{% url 'quizzes:item_history' entry.item_id %}">{{ entry.prompt|truncatewords:14 }}</a> <span class="help">{{ entry.last_reviewed_at|date:"j M" }}</span></li>
    {% endfor %}"""


def _normalised(html: str) -> str:
    import re

    return re.sub(r">\s+<", "><", html).strip()


def test_strength_rows_and_recent_items_match_the_template_loops_they_replace():
    """The same markup (whitespace between tags aside) as the template loops, with titles and
    prompts that need escaping, recall at rounding edges, and dates near midnight in the
    learner's zone."""
    from datetime import UTC, datetime

    from django.template import Context, engines
    from django.utils import timezone

    from courses.models import Course, Module
    from quizzes.selectors.history import ReviewedItem
    from quizzes.selectors.strength import ModuleStrength

    engine = engines["django"].engine
    course = Course(title='R&D "deep" <dive>')
    modules = []
    for n, mean in enumerate([None, 0.0, 0.0005, 0.125, 0.12345, 0.8125, 0.9995, 0.995, 1.0]):
        module = Module(pk=n + 1, title=f"Module {n} <b>&amp;</b> o'k", course=course)
        modules.append(ModuleStrength(module=module, items=9, scheduled=n, mean_recall=mean))
    prompt = "What bounds <decode> & why? " + " ".join(f"word{i}" for i in range(20))
    recent = [
        ReviewedItem(7, prompt, datetime(2026, 3, 29, 23, 30, tzinfo=UTC), 0, False),
        ReviewedItem(8, "Short 'one'", datetime(2026, 12, 31, 10, 0, tzinfo=UTC), 2, False),
        ReviewedItem(9, "line\nbreaks\n\nhere", datetime(2026, 1, 1, 0, 0, tzinfo=UTC), 0, False),
    ]
    for zone in ("UTC", "Pacific/Auckland", "America/Los_Angeles"):
        with timezone.override(zone):
            old = engine.from_string(_OLD_STRENGTH).render(Context({"modules": modules}))
            new = engine.from_string("{% load stats_tables %}{% strength_rows modules %}")
            assert _normalised(new.render(Context({"modules": modules}))) == _normalised(old)
            old = engine.from_string(_OLD_RECENT).render(Context({"recent": recent}))
            new = engine.from_string("{% load stats_tables %}{% recent_items recent %}")
            assert _normalised(new.render(Context({"recent": recent}))) == _normalised(old)
