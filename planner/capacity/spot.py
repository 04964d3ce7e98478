"""Spot (preemptible) capacity: the expected cost of a checkpointed run that can be interrupted,
and the checkpoint interval that balances saving against redoing lost work. Pure arithmetic.

First-order model (Young 1974, "A first order approximation to the optimum checkpoint interval",
Communications of the ACM 17(9); Daly 2006, FGCS 22(3)): a run of W hours of work saves a
checkpoint every c minutes, each save taking s minutes; interruptions arrive at a steady rate λ
per hour of running; each one loses, on average, half an interval of work plus the restart time r.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from planner.capacity.units import CapacityInputError, exact

# How long a provider warns before it takes a spot machine back: AWS "Spot Instance interruption
# notices" (EC2 user guide: "a two-minute warning"); Google Cloud "Spot VMs" (Compute Engine docs:
# preemption notice of 30 seconds); Azure "Use Azure Spot Virtual Machines" (Scheduled Events,
# "minimum notice of 30 seconds"). A server must drain or save within this time.
NOTICE_SECONDS: Final[dict[str, int]] = {"aws": 120, "gcp": 30, "azure": 30}
MINUTES_PER_HOUR: Final = 60
HOURS_PER_DAY: Final = 24


@dataclass(frozen=True, slots=True)
class SpotRun:
    """The expected figures of one interrupted, checkpointed run."""

    work_hours: Fraction
    saves: Fraction  # checkpoints written over the run
    running_hours: Fraction  # work plus the time spent saving
    interruptions: Fraction  # expected, over the running hours
    lost_hours: Fraction  # expected: half an interval of work plus the restart, each time
    expected_hours: Fraction
    expected_cost_usd: Fraction


def spot_run(
    *,
    work_hours: Fraction | float,
    price_per_hour: Fraction | float,
    checkpoint_every_minutes: Fraction | float,
    checkpoint_save_minutes: Fraction | float,
    interruptions_per_day: Fraction | float,
    restart_minutes: Fraction | float,
) -> SpotRun:
    """The run's expected hours and cost: running = W × (1 + s/c); interruptions = running × λ;
    lost = interruptions × (c/2 + r); cost = (running + lost) × price."""
    work, price = exact(work_hours), exact(price_per_hour)
    every, save = exact(checkpoint_every_minutes), exact(checkpoint_save_minutes)
    rate, restart = exact(interruptions_per_day), exact(restart_minutes)
    if work <= 0 or price < 0 or save < 0 or rate < 0 or restart < 0:
        raise CapacityInputError("work_hours", "hours, price and minutes must be positive")
    if every <= 0:
        raise CapacityInputError("checkpoint_every_minutes", "must be greater than zero")
    saves = work * MINUTES_PER_HOUR / every
    running = work + saves * save / MINUTES_PER_HOUR
    interruptions = running * rate / HOURS_PER_DAY
    lost = interruptions * (every / 2 + restart) / MINUTES_PER_HOUR
    expected = running + lost
    return SpotRun(work, saves, running, interruptions, lost, expected, expected * price)


def young_interval_minutes(
    *, checkpoint_save_minutes: Fraction | float, interruptions_per_day: Fraction | float
) -> float:
    """Young's interval: √(2 × save time × mean time between interruptions), in minutes."""
    save, rate = exact(checkpoint_save_minutes), exact(interruptions_per_day)
    if save <= 0 or rate <= 0:
        raise CapacityInputError("interruptions_per_day", "save time and rate must be positive")
    mean_between = Fraction(HOURS_PER_DAY * MINUTES_PER_HOUR) / rate
    return math.sqrt(2 * save * mean_between)
