"""A course's skills in its content files: the list (`[[skills]]` in course.toml or in
skills.toml) and each quiz item's tags (`skills = [...]` on the item, or skills.toml's `[items]`
table mapping an item key to its skills). Once a course lists skills, every item needs at least
one and every tag must be on the list; errors name file, line and reason."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from courses.services.content_specs import ContentError, ItemSpec, ModuleSpec, SkillSpec
from courses.services.content_toml import TomlDoc, TomlTable, unique_values

SKILLS_FILE = "skills.toml"
SKILL_KEYS = {"slug", "title"}
SKILL_SLUG_MAX = 60
# An item exercises a few skills; a longer list is a mistake in the file.
MAX_SKILLS_PER_ITEM = 8
_SLUG_RE = re.compile(r"^[-a-z0-9_]+$")


def _slug_list(value: object) -> tuple[str, ...] | None:
    """A list of distinct skill slugs, or None if `value` is not one."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_SKILLS_PER_ITEM:
        return None
    if not all(
        isinstance(v, str) and _SLUG_RE.match(v) and len(v) <= SKILL_SLUG_MAX for v in value
    ):
        return None
    if len(set(value)) != len(value):
        return None
    return tuple(value)


SLUG_LIST_WHAT = (
    f"a list of 1 to {MAX_SKILLS_PER_ITEM} distinct skill slugs (lower-case letters, digits, "
    f'- and _), e.g. ["memory-fit", "kv-cache"]'
)


def item_skills_read(table: TomlTable) -> tuple[str, ...]:
    """The `skills` of one quiz item's table, () if it has none."""
    if "skills" not in table.data:
        return ()
    skills = _slug_list(table.data["skills"])
    if skills is None:
        raise table._wrong("skills", SLUG_LIST_WHAT)
    return skills


def _skill_list(tables: list[TomlTable]) -> list[SkillSpec]:
    skills = [
        SkillSpec(
            slug=t.slug("slug", max_length=SKILL_SLUG_MAX), title=t.text("title", max_length=120)
        )
        for t in tables
    ]
    unique_values(tables, "slug", [s.slug for s in skills], "skill slug")
    return skills


def _mapping(doc: TomlDoc) -> dict[str, tuple[tuple[str, ...], int | None]]:
    """skills.toml's [items]: item key -> (skills, line)."""
    data = doc.data.get("items", {})
    if not isinstance(data, dict):
        raise doc.error(("items",), "[items] must be a table: item-key = [skills]")
    mapping: dict[str, tuple[tuple[str, ...], int | None]] = {}
    for key, value in data.items():
        skills = _slug_list(value)
        if skills is None:
            raise doc.error(("items", key), f"'items.{key}' must be {SLUG_LIST_WHAT}")
        mapping[key] = (skills, doc.line(("items", key)))
    return mapping


def _untagged(item: ItemSpec, known: list[str]) -> ContentError:
    file, line = item.source or (Path("?"), None)
    return ContentError(
        file,
        line,
        f"quiz item '{item.key}' has no skill: add skills = [...] to it, or map it in "
        f"{SKILLS_FILE} under [items] (the course's skills: {', '.join(known)})",
    )


def skills_apply(
    *, root: TomlTable, skills_file: Path, modules: list[ModuleSpec]
) -> tuple[tuple[SkillSpec, ...], list[ModuleSpec]]:
    """The course's skill list, and the modules with each item's skills (its own and those
    skills.toml maps to it), checked against the list."""
    skills = _skill_list(root.tables("skills", SKILL_KEYS, required=False))
    mapping: dict[str, tuple[tuple[str, ...], int | None]] = {}
    doc: TomlDoc | None = None
    if skills_file.is_file():
        doc = TomlDoc(skills_file)
        file_root = TomlTable(doc, (), doc.data, {"skills", "items"})
        more = _skill_list(file_root.tables("skills", SKILL_KEYS, required=False))
        clash = {s.slug for s in skills} & {s.slug for s in more}
        if clash:
            raise doc.error(("skills",), f"skill '{sorted(clash)[0]}' is listed in course.toml too")
        skills += more
        mapping = _mapping(doc)
    items = [i for m in modules for lesson in m.lessons for i in lesson.items]
    if not skills:
        tagged = next((i for i in items if i.skills), None)
        if tagged is not None or mapping:
            file, line = tagged.source if tagged and tagged.source else (skills_file, None)
            raise ContentError(
                file, line, "items carry skills but the course lists none: add [[skills]]"
            )
        return (), modules
    known = [s.slug for s in skills]
    # A key naming no item is not an error: removing an item from a lesson needs no edit here,
    # and a misspelt key still fails, as the item it meant is left without a skill.
    for key, (tags, line) in mapping.items():
        for tag in tags:
            if tag not in known:
                raise ContentError(
                    skills_file,
                    line,
                    f"unknown skill '{tag}' for item '{key}' (add it to [[skills]])",
                )

    def tagged_item(item: ItemSpec) -> ItemSpec:
        own = item.skills
        for tag in own:
            if tag not in known:
                file, line = item.source or (Path("?"), None)
                raise ContentError(
                    file,
                    line,
                    f"quiz item '{item.key}': unknown skill '{tag}' (add it to [[skills]])",
                )
        merged = tuple(dict.fromkeys(own + mapping.get(item.key, ((), None))[0]))
        if not merged:
            raise _untagged(item, known)
        return dataclasses.replace(item, skills=merged)

    new_modules = [
        dataclasses.replace(
            m,
            lessons=tuple(
                dataclasses.replace(lesson, items=tuple(tagged_item(i) for i in lesson.items))
                for lesson in m.lessons
            ),
        )
        for m in modules
    ]
    return tuple(skills), new_modules
