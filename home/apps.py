from __future__ import annotations

from collections.abc import Mapping

from django.apps import AppConfig

from planner.capacity.exercises import VARIABLES, solve_exercise
from planner.capacity.units import CapacityInputError
from quizzes.calculated import Step, TemplateInputError, WorkedSolution, register_solver


def exercise_solve(
    exercise: str, values: Mapping[str, object], *, sensitivity: bool = True
) -> WorkedSolution:
    """The planner's exercise in the quizzes app's terms (quizzes does not import planner)."""
    try:
        solution = solve_exercise(exercise, values, sensitivity=sensitivity)
    except CapacityInputError as exc:
        raise TemplateInputError(exc.field, exc.message) from exc
    sensitive = solution.most_sensitive
    return WorkedSolution(
        answer=solution.answer,
        unit=solution.unit,
        steps=tuple(Step(f.label, f.formula, f.substituted) for f in solution.formulas),
        most_sensitive=VARIABLES[sensitive].words if sensitive else None,
        sensitivity=solution.sensitivity,
        shown={**solution.facts, **solution.shown},  # the prompt shows facts and inputs
        mistakes=solution.mistakes,
    )


class HomeConfig(AppConfig):
    name = "home"
    verbose_name = "Home, dashboard and demo data"

    def ready(self) -> None:
        # Calculated quiz items are worked by the planner's engine: home, above both, joins them.
        register_solver(exercise_solve)
