"""Reads of workload cards, always scoped to what the user may see."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet

from accounts.models import User
from planner.cards.models import WorkloadCard


def workload_cards_visible_to(*, user: User | AnonymousUser) -> QuerySet[WorkloadCard]:
    """The user's own cards and every example card."""
    if not user.is_authenticated:
        return WorkloadCard.objects.filter(is_example=True)
    return WorkloadCard.objects.filter(Q(is_example=True) | Q(owner=user))


def workload_cards_owned_by(*, user: User, newest_first: bool = False) -> QuerySet[WorkloadCard]:
    """The learner's own workload cards (never the examples): by name, or last edited first."""
    cards = WorkloadCard.objects.filter(owner=user)
    return cards.order_by("-updated_at") if newest_first else cards.order_by("name")


def workload_cards_examples() -> QuerySet[WorkloadCard]:
    return WorkloadCard.objects.filter(is_example=True).order_by("name")


def workload_cards_for_compare(*, user: User, ids: list[int]) -> list[WorkloadCard]:
    """The chosen cards the user may see, in the order given (ids they may not see are left out)."""
    wanted = list(dict.fromkeys(ids))
    found = {c.pk: c for c in workload_cards_visible_to(user=user).filter(pk__in=wanted)}
    return [found[pk] for pk in wanted if pk in found]
