"""`python manage.py seed_workload_cards`: the source's three example cards (idempotent)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.core.management.base import BaseCommand
from django.urls import reverse

from planner.cards.services import workload_cards_seed_examples


class Command(BaseCommand):
    help = "Create or update the three example workload cards from the course source."

    def handle(self, *args: Any, **options: Any) -> None:
        cards = workload_cards_seed_examples()
        for card in cards:
            self.stdout.write(f"example card: {card.name} ({card.get_kind_display()})")
            self.stdout.write(
                f"  compare paths: {reverse('planner:paths')}?{urlencode(card.inputs)}"
            )
