"""Which choices a simulated learner picks on a choice item's first answer, so the item
analysis's choice shares and its distractor flag have something real-looking to show.

A right answer picks exactly the keyed choices. A wrong one picks a distractor, each with a
stable attractiveness drawn from its key; on a many-answer item it may instead leave out one
keyed choice. The miskeyed item's first distractor is the answer strong learners believe (it
draws most wrong answers), and one item per course has a distractor nobody picks."""

from __future__ import annotations

import random
import zlib

from quizzes.models import QuizItem

# How much likelier the miskeyed item's first distractor is than any other wrong pick.
MISKEYED_PULL = 6.0


def _attractiveness(item: QuizItem, key: str) -> float:
    return 0.1 + (zlib.crc32(f"{item.key}:{key}".encode()) % 1000) / 1000


def implausible_item(items: list[QuizItem], *, miskeyed: int | None) -> int | None:
    """The course's item with a distractor nobody picks: a stable pick among the choice items
    with at least two distractors (never the miskeyed one)."""
    candidates = [
        item
        for item in items
        if item.kind == QuizItem.Kind.MULTIPLE_CHOICE
        and item.pk != miskeyed
        and sum(1 for c in item.choices.all() if not c.is_correct) >= 2
    ]
    if not candidates:
        return None
    return max(candidates, key=lambda i: zlib.crc32(i.key.encode())).pk


def picked_choices(
    item: QuizItem,
    *,
    right: bool,
    rng: random.Random,
    miskeyed: bool = False,
    implausible: bool = False,
) -> list[str] | None:
    """The sorted keys picked on the first answer; None for an item without choices."""
    if item.kind != QuizItem.Kind.MULTIPLE_CHOICE:
        return None
    options = list(item.choices.all())
    keyed = [c.key for c in options if c.is_correct]
    if right:
        return sorted(keyed)
    distractors = [c.key for c in options if not c.is_correct]
    picked = set(keyed)
    if not distractors or (len(keyed) > 1 and rng.random() < 0.4):
        picked.discard(rng.choice(keyed))
        return sorted(picked)
    weights = [_attractiveness(item, key) for key in distractors]
    if miskeyed:
        weights[0] *= MISKEYED_PULL
    if implausible:
        weights[weights.index(min(weights))] = 0.0
    picked.add(rng.choices(distractors, weights=weights)[0])
    if len(keyed) == 1:
        picked -= set(keyed)  # one answer (radios): the distractor replaces the key
    return sorted(picked)
