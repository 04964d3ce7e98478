"""The planner's URLs (/planner/): the calculator with its JSON API, workload cards, paths, measured results."""

from __future__ import annotations

from planner.calculator.urls import urlpatterns as calculator_urls
from planner.cards.urls import urlpatterns as card_urls
from planner.measured.urls import urlpatterns as measured_urls
from planner.paths.urls import urlpatterns as paths_urls

app_name = "planner"

urlpatterns = [*calculator_urls, *card_urls, *paths_urls, *measured_urls]
