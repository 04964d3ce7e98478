"""Read and validate a course folder (course.toml, a Markdown file and a quiz TOML per lesson).

Nothing here touches the database: `course_content_load` returns plain specs, or raises
`ContentError` naming the file, the line and the reason.

Manifest layout (see content/gpus-tpus-ai-hardware/course.toml):
    [course]            slug, title, summary, is_published
    [scheduling]        desired_retention, learning_steps_minutes, relearning_steps_minutes,
                        maximum_interval_days, daily_new_limit, daily_review_limit
    [[modules]]         slug, title
    [[modules.lessons]] slug, title, file, quiz, objective, decision, estimated_minutes
    [rubric]            title; [[rubric.criteria]] key, title, description;
                        [[rubric.criteria.levels]] key, title, points, description
Quiz file: [[items]] key, kind, prompt, explanation, expected_value, unit, tolerance, model_answer;
           [[items.choices]] key, text, is_correct, reason; a calculated item: exercise,
           relative_tolerance, answer_range and [items.variables] (content/README.md)
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from core.ranges import (
    DAILY_NEW_LIMIT,
    DAILY_REVIEW_LIMIT,
    DESIRED_RETENTION,
    ESTIMATED_MINUTES,
    MAXIMUM_INTERVAL_DAYS,
    RUBRIC_POINTS,
)
from courses.services.content_calculated import CALCULATED_KEYS, calculated_load
from courses.services.content_skills import SKILLS_FILE, item_skills_read, skills_apply
from courses.services.content_specs import (
    KINDS,
    MANIFEST,
    RESERVED_COURSE_SLUGS,
    RESERVED_LESSON_SLUGS,
    ChoiceSpec,
    ContentError,
    CourseSpec,
    CriterionSpec,
    ItemSpec,
    LessonSpec,
    LevelSpec,
    ModuleSpec,
    RubricSpec,
)
from courses.services.content_toml import TomlDoc, TomlTable, file_inside, unique_values

# --- the loader -------------------------------------------------------------------------------

COURSE_KEYS = {"slug", "title", "summary", "is_published"}
SCHEDULING_KEYS = {
    "desired_retention",
    "learning_steps_minutes",
    "relearning_steps_minutes",
    "maximum_interval_days",
    "daily_new_limit",
    "daily_review_limit",
}
MODULE_KEYS = {"slug", "title", "lessons"}
LESSON_KEYS = {"slug", "title", "file", "quiz", "objective", "decision", "estimated_minutes"}
ITEM_KEYS = {
    "key",
    "kind",
    "prompt",
    "explanation",
    "expected_value",
    "unit",
    "tolerance",
    "model_answer",
    "choices",
    "skills",
    *CALCULATED_KEYS,
}
CHOICE_KEYS = {"key", "text", "is_correct", "reason"}
RUBRIC_KEYS = {"title", "criteria"}
CRITERION_KEYS = {"key", "title", "description", "levels"}
LEVEL_KEYS = {"key", "title", "points", "description"}


def _load_items(file: Path) -> tuple[ItemSpec, ...]:
    doc = TomlDoc(file)
    root = TomlTable(doc, (), doc.data, {"items"})
    tables = root.tables("items", ITEM_KEYS)
    items: list[ItemSpec] = []
    for t in tables:
        kind = t.text("kind")
        if kind not in KINDS:
            raise t._wrong("kind", "one of " + ", ".join(KINDS))
        choices: list[ChoiceSpec] = []
        expected: float | None = None
        if kind == "multiple_choice":
            choice_tables = t.tables("choices", CHOICE_KEYS)
            for c in choice_tables:
                choices.append(
                    ChoiceSpec(
                        key=c.slug("key", max_length=40),
                        text=c.text("text"),
                        is_correct=c.boolean("is_correct", default=False),
                        reason=c.text("reason", required=False),
                    )
                )
            unique_values(choice_tables, "key", [c.key for c in choices], "choice key")
            if len(choices) < 2:
                raise t.doc.error(
                    (*t.path, "choices"), "a multiple-choice item needs 2 choices or more"
                )
            if not any(c.is_correct for c in choices):
                raise t.doc.error(
                    (*t.path, "choices"), "a multiple-choice item needs a correct choice"
                )
        elif "choices" in t.data:
            raise t.doc.error((*t.path, "choices"), f"a {kind} item has no choices")
        if kind == "numeric":
            expected = t.number("expected_value", low=-(10**15))
        if kind == "free_recall":
            t.text("model_answer")
        calculated = calculated_load(t, kind)
        items.append(
            ItemSpec(
                key=t.slug("key", max_length=100),
                kind=kind,
                prompt=t.text("prompt"),
                explanation=t.text("explanation", required=False),
                expected_value=expected,
                unit=t.text("unit", required=False, max_length=40),
                tolerance=t.number("tolerance", default=0.0, low=0),
                model_answer=t.text("model_answer", required=False),
                choices=tuple(choices),
                calculated=calculated,
                skills=item_skills_read(t),
                source=(doc.file, doc.line(t.path)),
            )
        )
    unique_values(tables, "key", [i.key for i in items], "item key")
    return tuple(items)


def course_content_load(*, folder: Path) -> CourseSpec:
    """Parse and validate a course folder. Raises ContentError; never returns a half-valid spec."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ContentError(folder, None, "not a folder")
    doc = TomlDoc(folder / MANIFEST)
    root = TomlTable(doc, (), doc.data, {"course", "scheduling", "modules", "rubric", "skills"})
    files: list[Path] = [doc.file]

    course = root.table("course", COURSE_KEYS)
    if course is None:
        raise doc.error((), "missing required table [course]")
    sched = root.table("scheduling", SCHEDULING_KEYS) or TomlTable(doc, ("scheduling",), {}, set())

    module_tables = root.tables("modules", MODULE_KEYS)
    modules: list[ModuleSpec] = []
    all_lessons: list[tuple[TomlTable, str]] = []
    for m in module_tables:
        lessons: list[LessonSpec] = []
        for lt in m.tables("lessons", LESSON_KEYS):
            body_file = file_inside(folder, lt, "file")
            files.append(body_file)
            try:
                body = body_file.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise ContentError(body_file, None, f"not UTF-8 text ({exc.reason})") from exc
            if not body.strip():
                raise ContentError(body_file, 1, "the lesson body is empty")
            items: tuple[ItemSpec, ...] = ()
            if "quiz" in lt.data:
                quiz_file = file_inside(folder, lt, "quiz")
                files.append(quiz_file)
                items = _load_items(quiz_file)
            lesson = LessonSpec(
                slug=lt.slug("slug", reserved=RESERVED_LESSON_SLUGS),
                title=lt.text("title", max_length=200),
                objective=lt.text("objective"),
                decision=lt.text("decision", required=False),
                estimated_minutes=lt.bounded_integer(
                    "estimated_minutes", default=10, bound=ESTIMATED_MINUTES
                ),
                body_markdown=body,
                items=items,
            )
            lessons.append(lesson)
            all_lessons.append((lt, lesson.slug))
        modules.append(
            ModuleSpec(
                slug=m.slug("slug"), title=m.text("title", max_length=200), lessons=tuple(lessons)
            )
        )
    unique_values(module_tables, "slug", [m.slug for m in modules], "module slug")
    # Lesson URLs are /courses/<course>/<lesson>/, so lesson slugs are unique in the course.
    unique_values([t for t, _ in all_lessons], "slug", [s for _, s in all_lessons], "lesson slug")

    rubric: RubricSpec | None = None
    rt = root.table("rubric", RUBRIC_KEYS)
    if rt is not None:
        criteria: list[CriterionSpec] = []
        criterion_tables = rt.tables("criteria", CRITERION_KEYS)
        for ct in criterion_tables:
            level_tables = ct.tables("levels", LEVEL_KEYS)
            levels = [
                LevelSpec(
                    key=lv.slug("key", max_length=60),
                    title=lv.text("title", max_length=120),
                    points=lv.bounded_integer("points", bound=RUBRIC_POINTS),
                    description=lv.text("description", required=False),
                )
                for lv in level_tables
            ]
            unique_values(level_tables, "key", [lv.key for lv in levels], "level key")
            if len(levels) < 2:
                raise ct.doc.error((*ct.path, "levels"), "a criterion needs 2 levels or more")
            criteria.append(
                CriterionSpec(
                    key=ct.slug("key", max_length=60),
                    title=ct.text("title", max_length=200),
                    description=ct.text("description", required=False),
                    levels=tuple(levels),
                )
            )
        unique_values(criterion_tables, "key", [c.key for c in criteria], "criterion key")
        rubric = RubricSpec(title=rt.text("title", max_length=200), criteria=tuple(criteria))

    skills_file = folder / SKILLS_FILE
    if skills_file.is_file():
        files.append(skills_file)
    skills, modules = skills_apply(root=root, skills_file=skills_file, modules=modules)

    digest = hashlib.sha256()
    for f in files:
        digest.update(os.path.relpath(f, folder).encode())
        digest.update(b"\0")
        digest.update(f.read_bytes())
        digest.update(b"\0")

    return CourseSpec(
        slug=course.slug("slug", reserved=RESERVED_COURSE_SLUGS),
        title=course.text("title", max_length=200),
        summary=course.text("summary", required=False),
        is_published=course.boolean("is_published", default=True),
        desired_retention=sched.number("desired_retention", default=0.9, bound=DESIRED_RETENTION),
        learning_steps_minutes=sched.steps("learning_steps_minutes", [1, 10]),
        relearning_steps_minutes=sched.steps("relearning_steps_minutes", [10]),
        maximum_interval_days=sched.bounded_integer(
            "maximum_interval_days", default=36500, bound=MAXIMUM_INTERVAL_DAYS
        ),
        daily_new_limit=sched.bounded_integer("daily_new_limit", default=20, bound=DAILY_NEW_LIMIT),
        daily_review_limit=sched.bounded_integer(
            "daily_review_limit", default=200, bound=DAILY_REVIEW_LIMIT
        ),
        modules=tuple(modules),
        rubric=rubric,
        content_hash=digest.hexdigest(),
        files=tuple(files),
        skills=skills,
    )
