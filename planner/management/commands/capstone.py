"""`python manage.py capstone peer_simulate --plans N --assessors-per-plan K --biased SHARE
--random SHARE --seed S [--json]`: the peer step run on a throwaway cohort, then rolled back.

Bad flags exit with status 2 and one line naming the flag.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser

from core.bounds import Bound, BoundError, bounded_number
from planner.capstone.peer_models import ASSESSORS_PER_PLAN_MAX
from planner.capstone.peer_simulate import SimulationArgs, peer_simulate

# Large enough for the done-when's 300 plans and a tenfold margin; each plan costs about
# 30 queries, so 5,000 plans run in minutes, not hours.
PLANS_MAX = 5000
SEED_MAX = 2**32 - 1


class _ArgumentError(Exception):
    pass


class Command(BaseCommand):
    help = "Capstone tools: peer_simulate (the peer step on a throwaway cohort)."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.error = self._error  # type: ignore[method-assign]
        return parser

    def _error(self, message: str) -> NoReturn:
        self.stderr.write(f"capstone: {message}")
        sys.exit(2)

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        simulate = sub.add_parser("peer_simulate", help="simulate the peer step")
        simulate.error = self._error  # type: ignore[method-assign]
        simulate.add_argument("--plans", default="300")
        simulate.add_argument("--assessors-per-plan", default="3")
        simulate.add_argument("--biased", default="0.2")
        simulate.add_argument("--random", default="0.1")
        simulate.add_argument("--seed", default="1")
        simulate.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            sim = _simulation_args(options)
        except (BoundError, _ArgumentError) as exc:
            self._error(str(exc))
        figures = peer_simulate(sim)
        if options["json"]:
            self.stdout.write(json.dumps(figures, sort_keys=True))
            return
        for key, value in figures.items():
            self.stdout.write(f"{key}: {value}")


def _share(raw: object, field: str) -> float:
    value = bounded_number(raw, field=field, bound=Bound(Decimal(1), allow_zero=True))
    return float(value)


def _simulation_args(options: dict[str, Any]) -> SimulationArgs:
    plans = int(
        bounded_number(
            options["plans"], field="--plans", bound=Bound(Decimal(PLANS_MAX), integer=True)
        )
    )
    per_plan = int(
        bounded_number(
            options["assessors_per_plan"],
            field="--assessors-per-plan",
            bound=Bound(Decimal(ASSESSORS_PER_PLAN_MAX), integer=True),
        )
    )
    if plans <= per_plan:
        raise _ArgumentError(
            "--plans: must be more than --assessors-per-plan (nobody assesses their own plan)."
        )
    biased = _share(options["biased"], "--biased")
    random_share = _share(options["random"], "--random")
    if biased + random_share > 1:
        raise _ArgumentError("--random: --biased and --random together must be at most 1.")
    seed = int(
        bounded_number(
            options["seed"],
            field="--seed",
            bound=Bound(Decimal(SEED_MAX), allow_zero=True, integer=True),
        )
    )
    return SimulationArgs(
        plans=plans, assessors_per_plan=per_plan, biased=biased, random=random_share, seed=seed
    )
