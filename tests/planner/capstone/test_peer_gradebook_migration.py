"""Plans graded by peers before the gradebook took peer grades get theirs at the migration:
released when the peers decided, marked as the peers'; a flagged plan and a simulation's get none;
migrating back removes them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from planner.models import Grade

BEFORE = ("planner", "0007_capstone_peer_assessment")
AFTER = ("planner", "0009_capstone_peer_grades_backfill")
DECIDED = datetime(2026, 11, 2, 9, tzinfo=UTC)


def _others_latest() -> list[tuple[str, str]]:
    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    return [n for n in leaves if n[0] != "planner"]


@pytest.mark.django_db(transaction=True)
def test_plans_graded_by_peers_before_the_gradebook_get_their_grade() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([*_others_latest(), BEFORE])
    old = MigrationExecutor(connection).loader.project_state([*_others_latest(), BEFORE]).apps
    course = old.get_model("courses", "Course").objects.create(slug="c", title="C")
    rubric = old.get_model("planner", "Rubric").objects.create(course=course, title="R")
    Level = old.get_model("planner", "Level")
    chosen = []
    for key in ("memory", "cost"):
        criterion = old.get_model("planner", "Criterion").objects.create(
            rubric=rubric, key=key, title=key
        )
        levels = [
            Level.objects.create(criterion=criterion, key=k, title=k, points=p)
            for k, p in (("missing", 0), ("partial", 2), ("strong", 4))
        ]
        chosen.append(levels[1 if key == "memory" else 2])
    result = {"flags": [], "criteria": {str(lv.criterion_id): {"level_id": lv.pk} for lv in chosen}}
    plans = {}
    for n, (state, tag) in enumerate([("graded", ""), ("flagged", ""), ("graded", "sim")]):
        learner = old.get_model("accounts", "User").objects.create(
            email=f"l{n}@example.com", password="!"
        )
        worksheet = old.get_model("planner", "CapstoneWorksheet").objects.create(
            learner=learner, course=course
        )
        submission = old.get_model("planner", "CapstoneSubmission").objects.create(
            worksheet=worksheet, learner=learner, course=course, version=1, submitted_at=DECIDED
        )
        plans[state, tag] = old.get_model("planner", "PeerPlan").objects.create(
            submission=submission,
            course=course,
            learner=learner,
            state=state,
            result=result,
            graded_at=DECIDED,
            created_at=DECIDED,
            run_tag=tag,
        )

    executor = MigrationExecutor(connection)
    executor.migrate([*_others_latest(), AFTER])

    [grade] = Grade.objects.all()
    assert grade.submission_id == plans["graded", ""].submission_id
    assert (grade.origin, grade.status, grade.grader_id) == ("peers", "released", None)
    assert (grade.total_points, grade.max_points, grade.released_at) == (6, 8, DECIDED)
    assert sorted(s.points for s in grade.scores.all()) == [2, 4]
    assert grade.changes.get().action == "peer_graded"

    executor = MigrationExecutor(connection)
    executor.migrate([*_others_latest(), BEFORE])
    old = MigrationExecutor(connection).loader.project_state([*_others_latest(), BEFORE]).apps
    assert not old.get_model("planner", "Grade").objects.exists()
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
