"""The statistics page's figures written without the template filters give what the filters
gave."""

from __future__ import annotations

import random

import pytest
from django.template.defaultfilters import floatformat
from django.utils import translation

from quizzes.templatetags.stats_tables import fixed_places

# Halves at the second and third place (where rounding half up and the float's repr matter),
# the ends of the recall range and values past the fast path's range.
EDGES = [0.0, 1.0, 0.0005, 0.0015, 0.005, 0.125, 0.9995, 0.995, 0.1235, 0.2345, 1e-07, 2.5e-05]
BEYOND = [1000.0, 1234.5678, -0.25, -0.0005]


@pytest.mark.parametrize("language", ["en-gb", "de", "fr"])
def test_fixed_places_writes_what_floatformat_writes(language: str) -> None:
    """Recall values (random, at rounding edges and outside [0, 1000)) at 2 and 3 places are
    written exactly as `floatformat` writes them, in a locale with a decimal comma too."""
    rng = random.Random(7)
    values = EDGES + BEYOND + [rng.random() for _ in range(3000)]
    values += [round(rng.random(), 4) for _ in range(2000)]  # many exact halves at 3 places
    values += [rng.uniform(0, 999.9999) for _ in range(500)]
    with translation.override(language):
        from django.utils.formats import get_format

        separator = str(get_format("DECIMAL_SEPARATOR"))
        for value in values:
            for places in (2, 3):
                assert fixed_places(value, places, separator) == str(floatformat(value, places)), (
                    value,
                    places,
                )
        if language == "de":
            assert fixed_places(0.8125, 3, separator) == "0,813"
