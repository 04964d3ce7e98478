"""Anki's load balancer: within a review's fuzz range, which day to give it, weighted by how many
reviews the learner already has due each day and by their easy days. Pure Python.

Source: ankitects/anki, rslib/src/scheduler/states/load_balancer.rs (PR #3230, "Feat/Load
balancer", Anki 24.11; easy days from PR #3410), `select_weighted_interval` and
`calculate_easy_days_modifiers`:

    weight(day) = 1                                                 if no review is due that day
                = (1 / due(day))² × (1 / interval(day)) × easy(day)  otherwise

    easy(day)   = 1.0 normal, 0.0001 minimum; a reduced day (0.5) counts as minimum when
                  due(day) / 0.5 > (the other days' due) / (sum of every day's modifier − 0.5),
                  else as normal.

and one weighted draw seeded by the review's fuzz seed. Anki does not balance an interval over
`MAX_LOAD_BALANCE_INTERVAL` = 90 days (plain fuzz then). Items here have no siblings, so Anki's
sibling penalty (0.001) never applies.

One deliberate difference: Anki gives an empty day the full weight 1.0 whatever its easy-day
setting, so an empty minimum day draws cards until it is no longer empty; here the easy-day
modifier applies to an empty day too, so a Sunday set to minimum stays light.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# load_balancer.rs: MAX_LOAD_BALANCE_INTERVAL ("if we're sending a card far out into the future,
# the need to balance is low").
MAX_LOAD_BALANCE_INTERVAL = 90
# load_balancer.rs: LOAD_BALANCE_DAYS = MAX_LOAD_BALANCE_INTERVAL × 1.1, the days of due counts
# it keeps ("we may schedule things in the future ... a flat 10% increase").
LOAD_BALANCE_DAYS = 99
# load_balancer.rs, EasyDay::load_modifier.
NORMAL = 1.0
REDUCED = 0.5
MINIMUM = 0.0001
# A day of the learner's break: never chosen while the fuzz range holds another day.
AWAY = 1e-9

LEVEL_MODIFIERS: dict[str, float] = {"n": NORMAL, "r": REDUCED, "m": MINIMUM}


def easy_day_modifiers(levels: Sequence[str], counts: Sequence[int]) -> list[float]:
    """Each candidate day's easy-day modifier (load_balancer.rs `calculate_easy_days_modifiers`):
    `levels` are the days' settings ("n", "r", "m"), `counts` their reviews already due."""
    total_count = sum(counts)
    total_percent = sum(LEVEL_MODIFIERS[level] for level in levels)
    modifiers: list[float] = []
    for level, count in zip(levels, counts, strict=True):
        if level == "r":
            other_count = total_count - count
            other_percent = total_percent - REDUCED
            threshold = other_count / other_percent if other_percent > 0 else 0.0
            modifiers.append(MINIMUM if count / REDUCED > threshold else NORMAL)
        else:
            modifiers.append(LEVEL_MODIFIERS[level])
    return modifiers


def day_weights(
    *, intervals: Sequence[int], counts: Sequence[int], modifiers: Sequence[float]
) -> list[float]:
    """load_balancer.rs `select_weighted_interval`'s weights (the easy-day modifier also on an
    empty day: see the module's docstring)."""
    weights: list[float] = []
    for interval, count, modifier in zip(intervals, counts, modifiers, strict=True):
        base = 1.0 if count == 0 else (1.0 / count) ** 2 * (1.0 / interval)
        weights.append(base * modifier)
    return weights


def weighted_pick(weights: Sequence[float], *, seed: int) -> int:
    """The index one seeded draw picks, each index with probability weight / sum (as rand's
    WeightedIndex samples); the same seed picks the same index."""
    total = sum(weights)
    point = random.Random(seed).random() * total
    running = 0.0
    for index, weight in enumerate(weights):
        running += weight
        if point < running:
            return index
    return len(weights) - 1


@dataclass(frozen=True)
class LearnerWeek:
    """What the balancer needs to know of a learner, by day offset from their today: reviews due
    (read lazily, one query per window), the easy-day letter, and whether it is a break day."""

    counts: Callable[[int, int], Mapping[int, int]]  # (first, last) offsets → {offset: due}
    level: Callable[[int], str]  # offset → "n" | "r" | "m"
    away: Callable[[int], bool]  # offset → the day falls in the learner's break
    # False: the reviews already due do not count (the learner turned balancing off; easy days
    # and the break still do).
    balance: Callable[[], bool] = lambda: True

    def choose(self, *, interval: int, minimum: int, maximum: int, seed: int) -> int | None:
        """The interval in days the balancer gives a review whose unfuzzed interval is `interval`
        and fuzz range `minimum`..`maximum`; None: no balancing (plain fuzz)."""
        if interval > MAX_LOAD_BALANCE_INTERVAL or minimum > MAX_LOAD_BALANCE_INTERVAL:
            return None
        intervals = list(range(minimum, maximum + 1))
        levels = [self.level(day) for day in intervals]
        balance = self.balance()
        if not balance and all(level == "n" for level in levels):
            if not any(self.away(day) for day in intervals):
                return None
        if balance:
            due = self.counts(minimum, maximum)
            counts = [due.get(day, 0) for day in intervals]
        else:
            counts = [0] * len(intervals)
        modifiers = easy_day_modifiers(levels, counts)
        modifiers = [AWAY if self.away(d) else m for d, m in zip(intervals, modifiers, strict=True)]
        weights = day_weights(intervals=intervals, counts=counts, modifiers=modifiers)
        return intervals[weighted_pick(weights, seed=seed)]
