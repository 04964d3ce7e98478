"""The quizzes app's part of a course import: quiz items and their choices, by stable key."""

from __future__ import annotations

from typing import Any

from courses.models import Course, Lesson
from courses.services.content_specs import CalculatedSpec, ItemSpec, SkillSpec
from courses.services.content_sync import ImportReport, children_sync, row_upsert
from quizzes.calculated import (
    IMPORT_DRAWS,
    TemplateInputError,
    draw_values,
    figure,
    placeholders,
    solve,
    template_check,
    within_tolerance,
)
from quizzes.hand import HandError, hand_names, hand_parse, hand_value, shown_number
from quizzes.models import Choice, CourseSkill, QuizItem, RecallSchedule


def _item_values(spec: ItemSpec, position: int) -> dict[str, Any]:
    calculated = spec.calculated
    return {
        "kind": spec.kind,
        "position": position,
        "prompt": spec.prompt,
        "explanation": spec.explanation,
        "expected_value": spec.expected_value,
        "unit": spec.unit,
        "tolerance": spec.tolerance,
        "model_answer": spec.model_answer,
        "skills": list(spec.skills),
        "calculation": {
            "exercise": calculated.exercise,
            "variables": calculated.variables,
            "relative_tolerance": calculated.relative_tolerance,
            "answer_range": list(calculated.answer_range),
            "hand": calculated.hand,
        }
        if calculated
        else {},
    }


def quiz_items_sync(*, report: ImportReport, lesson: Lesson, specs: tuple[ItemSpec, ...]) -> None:
    """Upsert a lesson's quiz items and their choices by key; an item gone from the content is
    deleted unless a learner has a recall schedule for it."""
    items = {i.key: i for i in lesson.quiz_items.all()}
    choices: dict[int, dict[str, Choice]] = {}
    for choice in Choice.objects.filter(item__lesson=lesson):
        choices.setdefault(choice.item_id, {})[choice.key] = choice
    for position, spec in enumerate(specs):
        label = f"quiz item {lesson.slug}/{spec.key}"
        item = row_upsert(
            report,
            label,
            items.pop(spec.key, None),
            QuizItem,
            {"lesson": lesson, "key": spec.key},
            _item_values(spec, position),
        )
        current = choices.get(item.pk, {})
        children_sync(
            report,
            f"choice {lesson.slug}/{spec.key}",
            current,
            Choice,
            {"item": item},
            [
                (
                    cspec.key,
                    {"text": cspec.text, "is_correct": cspec.is_correct, "reason": cspec.reason},
                )
                for cspec in spec.choices
            ],
        )
        for gone in current.values():
            gone.delete()
            report.changes.append(f"deleted choice {lesson.slug}/{spec.key}/{gone.key}")
    for gone_item in items.values():
        remembered = RecallSchedule.objects.filter(item=gone_item).count()
        if remembered:
            report.kept.append(
                f"kept quiz item {lesson.slug}/{gone_item.key}: no longer in the content, "
                f"but {remembered} learner(s) have a recall schedule for it"
            )
        else:
            gone_item.delete()
            report.changes.append(f"deleted quiz item {lesson.slug}/{gone_item.key}")


def lessons_with_recall(*, lesson_ids: list[int]) -> set[int]:
    """The lessons among these whose quiz items some learner has a recall schedule for."""
    return set(
        RecallSchedule.objects.filter(item__lesson_id__in=lesson_ids)
        .values_list("item__lesson_id", flat=True)
        .distinct()
    )


def calculated_spec_check(spec: CalculatedSpec) -> tuple[str, str] | None:
    """The importer's check of a calculated template (registered with courses): every one of
    many draws is a valid input of its exercise and gives an answer inside its range, fills
    every placeholder of its prompt, and a hand working of its formula is marked right."""
    low, high = spec.answer_range
    fault = template_check(
        exercise=spec.exercise, variables=spec.variables, answer_min=low, answer_max=high
    )
    return fault or _prompt_and_hand_check(spec)


def _drawn(values: dict[str, object]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sorted(values.items()))


def _prompt_and_hand_check(
    spec: CalculatedSpec, draws: int = IMPORT_DRAWS
) -> tuple[str, str] | None:
    """Each draw: the prompt's placeholders are all given (variables or the exercise's facts),
    and the hand formula, worked with the numbers the prompt shows, lands within tolerance."""
    tree = None
    if spec.hand:
        try:
            tree = hand_parse(spec.hand)
        except HandError as exc:
            return "hand", f"the hand formula {exc}"
    for seed in range(draws):
        values = draw_values(spec.variables, seed)
        try:
            solution = solve(spec.exercise, values, sensitivity=False)
        except TemplateInputError as exc:  # template_check has reported it already
            return exc.field, exc.message
        missing = sorted(placeholders(spec.prompt) - set(solution.shown))
        if missing:
            return "prompt", (
                f"the prompt names {{{missing[0]}}}, which is neither a variable nor a fact "
                f"{spec.exercise} gives (draw {seed + 1})"
            )
        if tree is None:
            continue
        names = {
            k: n for k, text in solution.shown.items() if (n := shown_number(text)) is not None
        }
        for name in hand_names(tree) - set(names):
            return "hand", f"the hand formula names {name}, which the exercise does not give"
        try:
            hand = hand_value(tree, names)
        except HandError as exc:
            return "hand", f"draw {seed + 1} ({_drawn(values)}): the hand formula {exc}"
        unstated = sorted(hand_names(tree) - placeholders(spec.prompt))
        if unstated and not isinstance(hand, bool):  # a check (True/False) may use any fact
            return "hand", f"the hand formula uses {unstated[0]}, which the prompt never states"
        if hand is False or (
            not isinstance(hand, bool)
            and not within_tolerance(hand, solution.answer, spec.relative_tolerance)
        ):
            return "hand", (
                f"draw {seed + 1} ({_drawn(values)}): a hand working from the prompt's numbers "
                f"gives {hand if isinstance(hand, bool) else figure(hand)}, the engine "
                f"{figure(solution.answer)} {solution.unit}: outside the tolerance"
            )
    return None


def course_skills_sync(
    *, report: ImportReport, course: Course, specs: tuple[SkillSpec, ...]
) -> None:
    """Upsert the course's skill list by slug, in the file's order; a skill gone is deleted
    (items name skills by slug, and the items are re-imported in the same transaction)."""
    current = {s.slug: s for s in CourseSkill.objects.filter(course=course)}
    for position, spec in enumerate(specs):
        row_upsert(
            report,
            f"skill {spec.slug}",
            current.pop(spec.slug, None),
            CourseSkill,
            {"course": course, "slug": spec.slug},
            {"title": spec.title, "position": position},
        )
    for gone in current.values():
        gone.delete()
        report.changes.append(f"deleted skill {gone.slug}")
