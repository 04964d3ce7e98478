"""Training, scoring and adopting FSRS parameter sets for a course (pooled) or a learner in it.

A set is trained on the scope's reviews before a cut-off (70 % of them, by time) and scored on
the long-term reviews after it, beside FSRS-6's defaults and the set in force. It becomes active
only when it beats the set in force (or the defaults) on held-out log loss; otherwise it is
recorded as rejected. After a change each affected card's memory state is recomputed from its
reviews; due dates are kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from django.db import connection, transaction
from django.utils.translation import gettext as _

from courses.models import Course
from quizzes import fsrs_optimizer as opt
from quizzes.models import FsrsParameters, RecallSchedule
from quizzes.selectors.parameters import (
    active_parameters,
    latest_parameters,
    pooled_sample,
    review_histories,
    review_history_batches,
    scope_review_count,
    scopes_to_train,
)
from quizzes.services import fsrs_adapter

TRAIN_FRACTION = 0.7

Progress = Callable[[str], None]


def _quiet(_message: str) -> None:
    return None


def _scores_fields(prefix: str, scores: opt.Scores | None) -> dict[str, float | None]:
    return {
        f"{prefix}_log_loss": scores.log_loss if scores else None,
        f"{prefix}_rmse": scores.rmse_bins if scores else None,
        f"{prefix}_calibration": scores.calibration if scores else None,
    }


def parameters_train(
    *,
    course: Course,
    learner_id: int | None,
    now: datetime,
    progress: Progress = _quiet,
    weights: tuple[float, ...] | None = None,
) -> FsrsParameters:
    """Train (or, with `weights`, take) a candidate for the scope, score it and decide it.

    A pooled set learns from a stratified sample of the course's learners (pooled_sample) when
    the course holds more than SAMPLE_REVIEWS reviews, so its time and memory stop growing
    with the course; a personal set, from all of the learner's reviews.

    Raises opt.NotEnoughReviews when the scope has nothing to train or score on."""
    sample = pooled_sample(course=course) if learner_id is None else None
    histories = review_histories(course=course, learner_id=learner_id, learner_ids=sample)
    times = sorted(r.at for history in histories.values() for r in history)
    if sample is not None:
        progress(f"sample: {len(sample)} learners, {len(times)} reviews")
    if not times:
        raise opt.NotEnoughReviews("no reviews in this scope")
    cutoff = opt.cutoff_at_fraction(times, TRAIN_FRACTION)
    split = opt.time_split(opt.samples_from_histories(histories.values()), cutoff)
    if not split.heldout:
        raise opt.NotEnoughReviews("no long-term review after the cut-off to score on")
    progress(
        f"{len(times)} reviews; training on {len(split.train)} samples before {cutoff:%Y-%m-%d}, "
        f"scoring on {len(split.heldout)} after"
    )
    started = time.perf_counter()
    candidate = weights if weights is not None else opt.train(split.train)
    progress(f"trained in {time.perf_counter() - started:.2f} s")
    active = active_parameters(course=course, learner_id=learner_id)
    if active is None and learner_id is not None:
        # A learner's first personal set has to beat the pooled one that schedules them now.
        active = active_parameters(course=course, learner_id=None)
    active_weights = tuple(active.weights) if active else opt.DEFAULT_WEIGHTS
    scores = {
        "defaults": opt.score(opt.DEFAULT_WEIGHTS, split.heldout),
        "active": opt.score(active_weights, split.heldout),
        "candidate": opt.score(candidate, split.heldout),
    }
    for name, s in scores.items():
        if s is not None:
            progress(f"{name}: log loss {s.log_loss:.4f}, RMSE {s.rmse_bins:.2%}")
    with transaction.atomic():
        latest = latest_parameters(course=course, learner_id=learner_id)
        parameters = FsrsParameters.objects.create(
            course=course,
            learner_id=learner_id,
            version=(latest.version + 1) if latest else 1,
            weights=list(candidate),
            library=opt.LIBRARY,
            library_version=opt.library_version(),
            trained_at=now,
            cutoff=cutoff,
            # The scope's reviews (not the sample's): the next run's growth is measured on it.
            review_count=scope_review_count(course=course, learner_id=learner_id),
            train_long_term_count=split.train_long_term,
            heldout_count=len(split.heldout),
            **_scores_fields("defaults", scores["defaults"]),
            **_scores_fields("active", scores["active"]),
            **_scores_fields("candidate", scores["candidate"]),
        )
        parameters_decide(parameters=parameters, now=now)
    progress(f"v{parameters.version}: {parameters.status} ({parameters.reason})")
    return parameters


def parameters_decide(*, parameters: FsrsParameters, now: datetime) -> FsrsParameters:
    """Activate a candidate that beats the set in force on held-out log loss; else reject it."""
    in_force = parameters.active_log_loss
    beaten = parameters.candidate_log_loss is not None and (
        in_force is None or parameters.candidate_log_loss < in_force
    )
    if not fsrs_adapter.weights_valid(parameters.weights):
        parameters.status = FsrsParameters.Status.REJECTED
        parameters.reason = _("The scheduler refuses these weights.")
    elif not beaten:
        parameters.status = FsrsParameters.Status.REJECTED
        parameters.reason = _("Held-out log loss %(new).4f does not beat %(old).4f in force.") % {
            "new": parameters.candidate_log_loss or 0.0,
            "old": in_force or 0.0,
        }
    else:
        FsrsParameters.objects.filter(
            course_id=parameters.course_id,
            learner_id=parameters.learner_id,
            status=FsrsParameters.Status.ACTIVE,
        ).update(status=FsrsParameters.Status.RETIRED)
        parameters.status = FsrsParameters.Status.ACTIVE
        parameters.activated_at = now
        parameters.reason = _("Held-out log loss %(new).4f beats %(old).4f in force.") % {
            "new": parameters.candidate_log_loss or 0.0,
            "old": in_force or 0.0,
        }
    parameters.save(update_fields=["status", "activated_at", "reason"])
    if parameters.status == FsrsParameters.Status.ACTIVE:
        course = parameters.course
        learner_id = parameters.learner_id
        transaction.on_commit(
            lambda: schedules_recompute_memory(course=course, learner_id=learner_id)
        )
    return parameters


def schedules_recompute_memory(*, course: Course, learner_id: int | None) -> int:
    """Recompute stability and difficulty of each card the scope's parameters now schedule, from
    its reviews; due dates stay. Pooled: learners without a personal set. Returns cards updated.
    Read and written a batch of learners at a time, so memory holds one batch.

    A card graded meanwhile (its reps moved) is left as the grade wrote it."""
    personal: set[int] = set()
    if learner_id is None:
        personal = set(
            FsrsParameters.objects.filter(
                course=course, learner__isnull=False, status=FsrsParameters.Status.ACTIVE
            ).values_list("learner_id", flat=True)
        )
    scheduling = fsrs_adapter.scheduling_for(course=course, learner_id=learner_id)
    updated = 0
    ids = [learner_id] if learner_id is not None else None
    for histories in review_history_batches(course=course, learner_ids=ids):
        cards = [(key, h) for key, h in histories.items() if key[0] not in personal]
        states = opt.last_memory_states(scheduling.weights, [h for _, h in cards])
        rows = [
            (learner, item, len(history), stability, difficulty)
            for ((learner, item), history), (stability, difficulty) in zip(
                cards, states, strict=True
            )
        ]
        updated += _memory_states_write(rows)
    return updated


def _memory_states_write(rows: list[tuple[int, int, int, float, float]]) -> int:
    """Write (learner, item, reps, stability, difficulty) to each schedule whose reps still
    match: one statement per batch on PostgreSQL, one per card elsewhere."""
    if not rows:
        return 0
    if connection.vendor == "postgresql":
        columns = list(zip(*rows, strict=True))
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE quizzes_recallschedule s SET stability = v.stability, "
                "difficulty = v.difficulty FROM (SELECT unnest(%s::bigint[]) AS learner, "
                "unnest(%s::bigint[]) AS item, unnest(%s::integer[]) AS reps, "
                "unnest(%s::float8[]) AS stability, unnest(%s::float8[]) AS difficulty) v "
                "WHERE s.learner_id = v.learner AND s.item_id = v.item AND s.reps = v.reps",
                [list(c) for c in columns],
            )
            return max(cursor.rowcount, 0)
    updated = 0
    with transaction.atomic():
        for learner, item, reps, stability, difficulty in rows:
            updated += RecallSchedule.objects.filter(
                learner_id=learner, item_id=item, reps=reps
            ).update(stability=stability, difficulty=difficulty)
    return updated


def parameters_refresh(
    *, course: Course, now: datetime, progress: Progress = _quiet
) -> list[FsrsParameters]:
    """Train a candidate for every scope of the course whose reviews have grown."""
    trained = []
    for learner_id in scopes_to_train(course=course):
        scope = f"learner {learner_id}" if learner_id else "pooled"
        progress(f"{course.slug} · {scope}")
        try:
            trained.append(
                parameters_train(course=course, learner_id=learner_id, now=now, progress=progress)
            )
        except opt.NotEnoughReviews as exc:
            progress(f"skipped: {exc}")
    return trained


def schedules_reschedule(*, course: Course) -> int:
    """The instructor's opt-in after a change of parameters: replay each card's reviews through
    the scheduler its learner now has (with the same seeded fuzz a grade uses), so its memory
    state and its due date are as if these parameters had always scheduled it. Returns cards
    moved. A card graded meanwhile (its reps moved) is left as the grade wrote it."""
    schedulings: dict[int, fsrs_adapter.Scheduling] = {}
    moved = 0
    for (learner_id, item_id), history in (
        card for histories in review_history_batches(course=course) for card in histories.items()
    ):
        if learner_id not in schedulings:
            schedulings[learner_id] = fsrs_adapter.scheduling_for(
                course=course, learner_id=learner_id
            )
        card = fsrs_adapter.new_card(card_id=1, now=history[0].at)
        for reps, review in enumerate(history):
            seed = fsrs_adapter.fuzz_seed(learner_id=learner_id, item_id=item_id, reps=reps)
            scheduler = fsrs_adapter.scheduler_for(course, schedulings[learner_id], seed=seed)
            card = fsrs_adapter.review(
                scheduler=scheduler, card=card, rating=review.rating, now=review.at
            )
        moved += RecallSchedule.objects.filter(
            learner_id=learner_id, item_id=item_id, reps=len(history)
        ).update(
            state=int(card.state),
            step=card.step,
            stability=card.stability,
            difficulty=card.difficulty,
            due=card.due,
        )
    return moved
