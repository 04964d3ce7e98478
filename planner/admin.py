"""The planner's admin, for Django's autodiscovery: each sub-domain registers its own models."""

from __future__ import annotations

from planner.capstone import admin as capstone_admin
from planner.capstone import peer_admin
from planner.cards import admin as cards_admin

__all__ = ["capstone_admin", "cards_admin", "peer_admin"]
