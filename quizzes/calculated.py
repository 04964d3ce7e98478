"""Calculated items: numbers drawn per learner, item and review, and the problem's answer worked by
a solver that a higher app registers (home registers the planner's exercises)."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from quizzes.models import QuizItem, RecallSchedule

# `{name}` in a prompt: a variable's drawn value, as the solver shows it.
PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A typed answer: at most this many characters and this magnitude.
ANSWER_MAX_LENGTH = 40
ANSWER_MAX = 1e15


@dataclass(frozen=True, slots=True)
class Step:
    label: str
    formula: str
    substituted: str


@dataclass(frozen=True, slots=True)
class WorkedSolution:
    """What the solver returns: the answer, the engine's steps with these numbers, the input
    that mattered most (in words) and each input as the prompt shows it."""

    answer: float
    unit: str
    steps: tuple[Step, ...]
    most_sensitive: str | None = None
    sensitivity: float | None = None
    shown: dict[str, str] = field(default_factory=dict)
    # The answer each known mistake gives with these numbers, by the mistake's name.
    mistakes: dict[str, float] = field(default_factory=dict)

    @property
    def answer_text(self) -> str:
        return figure(self.answer)

    @property
    def sensitivity_percent(self) -> str:
        percent = (self.sensitivity or 0) * 100
        return f"{percent:.0f}" if percent >= 10 else f"{percent:.1f}"


class TemplateInputError(ValueError):
    """The solver cannot work these inputs; `field` names the variable (or "exercise")."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class Solver(Protocol):
    """Works `exercise` with `values`; without `sensitivity` it need not seek the input that
    mattered most (the importer's many draws skip it)."""

    def __call__(
        self, exercise: str, values: Mapping[str, object], *, sensitivity: bool = True
    ) -> WorkedSolution: ...


_solvers: list[Solver] = []


def register_solver(solve: Solver) -> None:
    """Register the function that works an exercise (it raises TemplateInputError); the last
    registered wins. Called from a higher app's AppConfig.ready()."""
    _solvers.append(solve)


def within_tolerance(value: float, answer: float, relative_tolerance: float) -> bool:
    """Whether an answer counts as right: within the item's relative tolerance of the engine's."""
    return abs(value - answer) <= relative_tolerance * abs(answer) + 1e-9


def relative_error(value: float, answer: float) -> float:
    return abs(value - answer) / abs(answer) if answer else abs(value)


def figure(value: float) -> str:
    """A number as the worked solution prints it: whole numbers whole, others to 3 figures."""
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    if abs(value) >= 1:
        return f"{value:,.2f}"
    return f"{value:.3g}"


# --- drawing --------------------------------------------------------------------------------


def draw_seed(*, learner_id: int, item_id: int, review: int) -> int:
    """The seed of one learner's problem for one item at one review (the schedule's reps)."""
    digest = hashlib.sha256(f"calculated:{learner_id}:{item_id}:{review}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _range_values(spec: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    return spec["min"], spec["max"], spec.get("step", 1)


def draw_values(variables: Mapping[str, Any], seed: int) -> dict[str, object]:
    """One value per variable: a list gives one of its values, a {min, max, step} range one of
    its steps. The same seed always draws the same values."""
    rng = random.Random(seed)
    drawn: dict[str, object] = {}
    for name in sorted(variables):
        spec = variables[name]
        if isinstance(spec, list):
            drawn[name] = spec[rng.randrange(len(spec))]
            continue
        low, high, step = _range_values(spec)
        if all(isinstance(v, int) for v in (low, high, step)):
            drawn[name] = low + step * rng.randrange(int((high - low) // step) + 1)
        else:
            count = math.floor((high - low) / step + 1e-9)
            drawn[name] = round(low + step * rng.randrange(count + 1), 10)
    return drawn


def prompt_with(prompt: str, shown: Mapping[str, str]) -> str:
    """The prompt with each `{name}` replaced by the drawn value as shown."""
    return PLACEHOLDER_RE.sub(lambda m: shown.get(m.group(1), m.group(0)), prompt)


def placeholders(prompt: str) -> set[str]:
    return set(PLACEHOLDER_RE.findall(prompt))


@functools.lru_cache(maxsize=4096)
def _solved(exercise: str, values_json: str, sensitivity: bool) -> WorkedSolution:
    if not _solvers:
        raise RuntimeError("no solver registered for calculated items (home.apps registers it)")
    return _solvers[-1](exercise, json.loads(values_json), sensitivity=sensitivity)


def solve(
    exercise: str, values: Mapping[str, object], *, sensitivity: bool = True
) -> WorkedSolution:
    """The solver's answer for these values (remembered: the engine is a pure function)."""
    return _solved(exercise, json.dumps(values, sort_keys=True), sensitivity)


@dataclass(frozen=True, slots=True)
class Problem:
    """One learner's drawn problem: its values, the prompt with them, the worked solution."""

    values: dict[str, object]
    prompt: str
    solution: WorkedSolution
    relative_tolerance: float
    unit: str

    def is_correct(self, value: float) -> bool:
        return within_tolerance(value, self.solution.answer, self.relative_tolerance)

    @property
    def tolerance_percent(self) -> str:
        return figure(self.relative_tolerance * 100)


def problem_for(item: QuizItem, *, learner_id: int, review: int) -> Problem:
    """The problem `item` shows this learner at this review (0 before the first answer)."""
    calculation = item.calculation
    seed = draw_seed(learner_id=learner_id, item_id=item.pk, review=review)
    values = draw_values(calculation["variables"], seed)
    solution = solve(calculation["exercise"], values)
    return Problem(
        values=values,
        prompt=prompt_with(item.prompt, solution.shown),
        solution=solution,
        relative_tolerance=calculation["relative_tolerance"],
        unit=item.unit or solution.unit,
    )


def schedule_problem(schedule: RecallSchedule) -> Problem:
    """The problem of a scheduled card (its item loaded): drawn for its learner at its reps."""
    return problem_for(schedule.item, learner_id=schedule.learner_id, review=schedule.reps)


def answer_parse(text: str) -> float | None:
    """A typed number ("1,5" reads as 1.5), or None when it is not a bounded, finite number."""
    text = text.strip().replace(",", ".")
    if not text or len(text) > ANSWER_MAX_LENGTH:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and abs(value) <= ANSWER_MAX else None


# --- the importer's check -------------------------------------------------------------------

# Each template is drawn this many times at import; every draw must work and land in range.
IMPORT_DRAWS = 200


def template_check(
    *,
    exercise: str,
    variables: Mapping[str, Any],
    answer_min: float,
    answer_max: float,
    draws: int = IMPORT_DRAWS,
) -> tuple[str, str] | None:
    """Draw the template `draws` times; None when every draw works, else the variable (or
    "exercise", "answer_range") at fault and why."""
    for seed in range(draws):
        values = draw_values(variables, seed)
        try:
            solution = solve(exercise, values, sensitivity=False)
        except TemplateInputError as exc:
            shown = ", ".join(f"{k} = {v}" for k, v in sorted(values.items()))
            return (
                exc.field,
                f"draw {seed + 1} ({shown}) is not a valid input: {exc.field}: {exc.message}",
            )
        if not answer_min <= solution.answer <= answer_max:
            shown = ", ".join(f"{k} = {v}" for k, v in sorted(values.items()))
            return (
                "answer_range",
                f"draw {seed + 1} ({shown}) gives {figure(solution.answer)} {solution.unit}, "
                f"outside answer_range [{figure(answer_min)}, {figure(answer_max)}]",
            )
    return None
