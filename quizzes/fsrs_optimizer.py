"""FSRS-6 parameters learnt from review histories with `fsrs-rs-python`: training items, a time
split, training, held-out scores, memory states and the retention/workload curve.

Pure (no Django), so the bench, the management commands and the nightly job call the same
functions. `fsrs` stays the scheduler; this module only learns and scores its 21 weights.
Elapsed days are counted as `fsrs.Scheduler` counts them: whole days of the timedelta between two
reviews (`(current - previous).days`), so a review under a day after the last is short-term.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import version

import fsrs_rs_python as rs

LIBRARY = "fsrs-rs-python"
DEFAULT_WEIGHTS: tuple[float, ...] = tuple(float(w) for w in rs.DEFAULT_PARAMETERS)
# The curve the instructor and the learner choose from (issue 13).
CURVE_RETENTIONS: tuple[float, ...] = (0.80, 0.82, 0.84, 0.86, 0.88, 0.90, 0.92, 0.94, 0.95, 0.97)
CURVE_DAYS = 365
CURVE_SEED = 42
DEFAULT_NEW_PER_DAY = 20


def library_version() -> str:
    return version(LIBRARY)


@dataclass(frozen=True)
class Review:
    """One review of one card: when (aware, UTC) and the rating 1–4."""

    at: datetime
    rating: int


@dataclass(frozen=True)
class Sample:
    """A card's history up to and including one review: the optimiser's unit of training and
    scoring. `long_term` when that last review came a day or more after the one before."""

    reviews: tuple[tuple[int, int], ...]  # (rating, elapsed days), first review elapsed 0
    at: datetime
    long_term: bool

    @property
    def item(self) -> rs.FSRSItem:
        return _item(self.reviews)


def _item(reviews: Sequence[tuple[int, int]]) -> rs.FSRSItem:
    return rs.FSRSItem([rs.FSRSReview(rating, delta) for rating, delta in reviews])


def elapsed_days(previous: datetime, current: datetime) -> int:
    return (current - previous).days


# A card's history gives a sample per review, each holding every review before it: a card
# reviewed n times costs n^2 / 2 reviews. Past this many samples a card keeps evenly spaced
# ones (its last always), so a card reviewed daily for years costs what a busy month does.
MAX_SAMPLES_PER_CARD = 64


def samples_from_histories(
    histories: Iterable[Sequence[Review]], *, max_per_card: int | None = MAX_SAMPLES_PER_CARD
) -> list[Sample]:
    """The prefixes of every history that the optimiser can learn from (it needs at least one
    review a day or more after another), at most `max_per_card` per card, oldest last review
    first."""
    out: list[Sample] = []
    for history in histories:
        reviews: list[tuple[int, int]] = []
        previous: datetime | None = None
        card: list[Sample] = []
        for review in history:
            delta = 0 if previous is None else elapsed_days(previous, review.at)
            reviews.append((review.rating, delta))
            previous = review.at
            if len(reviews) >= 2 and any(d > 0 for _, d in reviews):
                card.append(Sample(reviews=tuple(reviews), at=review.at, long_term=delta > 0))
        if max_per_card is not None and len(card) > max_per_card:
            step = len(card) / max_per_card
            card = [card[len(card) - 1 - int(k * step)] for k in range(max_per_card)][::-1]
        out += card
    out.sort(key=lambda s: s.at)
    return out


@dataclass(frozen=True)
class Split:
    """Samples whose last review is before the cut-off train; long-term ones after it score."""

    train: list[rs.FSRSItem]
    heldout: list[Sample]
    train_long_term: int


def time_split(samples: Sequence[Sample], cutoff: datetime) -> Split:
    train = [s for s in samples if s.at < cutoff]
    return Split(
        train=[s.item for s in train],
        heldout=[s for s in samples if s.at >= cutoff and s.long_term],
        train_long_term=sum(1 for s in train if s.long_term),
    )


def cutoff_at_fraction(times: Sequence[datetime], fraction: float) -> datetime:
    """The time of the review at `fraction` of the way through `times` (sorted, non-empty)."""
    index = min(max(int(len(times) * fraction), 0), len(times) - 1)
    return times[index]


class NotEnoughReviews(ValueError):
    """Nothing to train on: no card has a review a day or more after another."""


def train(items: Sequence[rs.FSRSItem]) -> tuple[float, ...]:
    """The 21 FSRS-6 weights fitted to `items` (fsrs-rs's defaults when they are too few)."""
    if not items:
        raise NotEnoughReviews("no review a day or more after another to learn from")
    try:
        weights = rs.FSRS(rs.DEFAULT_PARAMETERS).compute_parameters(list(items))
    except ValueError as exc:
        # fsrs-rs refuses a set its outlier filter leaves too small ("NotEnoughData"): a scope
        # to skip, not a failure of the nightly job's other scopes.
        if "NotEnoughData" in str(exc):
            raise NotEnoughReviews("too few reviews left after fsrs-rs's outlier filter") from exc
        raise
    return tuple(float(w) for w in weights)


@dataclass(frozen=True)
class Scores:
    """How well a set of weights predicts held-out long-term reviews.

    `predicted` is the mean predicted recall and `observed` the share actually recalled: their
    gap is the calibration (positive: the model is over-confident)."""

    log_loss: float
    rmse_bins: float
    predicted: float
    observed: float
    count: int

    @property
    def calibration(self) -> float:
        return self.predicted - self.observed


def retrievability(weights: Sequence[float], *, stability: float, days: float) -> float:
    """FSRS-6's forgetting curve, the same formula `fsrs.Scheduler` uses."""
    decay = -weights[20]
    factor = 0.9 ** (1 / decay) - 1
    return float((1 + factor * days / stability) ** decay)


def score(weights: Sequence[float], heldout: Sequence[Sample]) -> Scores | None:
    """Scores on `heldout` (long-term samples); None when there is none."""
    if not heldout:
        return None
    model = rs.FSRS(list(weights))
    evaluation = model.evaluate([s.item for s in heldout])
    states = model.memory_state_batch([_item(s.reviews[:-1]) for s in heldout])
    predicted = [
        retrievability(weights, stability=state.stability, days=s.reviews[-1][1])
        for s, state in zip(heldout, states, strict=True)
    ]
    recalled = [s.reviews[-1][0] > 1 for s in heldout]
    return Scores(
        log_loss=float(evaluation.log_loss),
        rmse_bins=float(evaluation.rmse_bins),
        predicted=math.fsum(predicted) / len(predicted),
        observed=sum(recalled) / len(recalled),
        count=len(heldout),
    )


def memory_states(weights: Sequence[float], history: Sequence[Review]) -> list[tuple[float, float]]:
    """(stability, difficulty) after each review of one card's history."""
    reviews: list[tuple[int, int]] = []
    previous: datetime | None = None
    for review in history:
        reviews.append(
            (review.rating, 0 if previous is None else elapsed_days(previous, review.at))
        )
        previous = review.at
    states = rs.FSRS(list(weights)).historical_memory_states(_item(reviews))
    return [(float(s.stability), float(s.difficulty)) for s in states]


def last_memory_states(
    weights: Sequence[float], histories: Sequence[Sequence[Review]]
) -> list[tuple[float, float]]:
    """(stability, difficulty) after the last review of each history, in one call of fsrs-rs
    for the batch."""
    items = []
    for history in histories:
        reviews: list[tuple[int, int]] = []
        previous: datetime | None = None
        for review in history:
            reviews.append(
                (review.rating, 0 if previous is None else elapsed_days(previous, review.at))
            )
            previous = review.at
        items.append(_item(reviews))
    states = rs.FSRS(list(weights)).memory_state_batch(items)
    return [(float(s.stability), float(s.difficulty)) for s in states]


@dataclass(frozen=True)
class WorkloadPoint:
    retention: float
    reviews_per_day: float
    minutes_per_day: float
    memorized: float  # items remembered at the end of the simulated year


@dataclass(frozen=True)
class WorkloadCurve:
    points: tuple[WorkloadPoint, ...]
    minimum_recommended: float


def workload_curve(
    weights: Sequence[float],
    *,
    items: int,
    daily_new_limit: int,
    daily_review_limit: int,
    maximum_interval_days: int,
    retentions: Sequence[float] = CURVE_RETENTIONS,
) -> WorkloadCurve:
    """Simulated reviews and minutes per day over a year at each retention, for a deck of
    `items` under the course's limits, and fsrs-rs's minimum recommended retention."""
    config = rs.default_simulator_config()
    config.deck_size = max(items, 1)
    config.learn_span = CURVE_DAYS
    # A course paused for new items (limit 0) is still drawn as if its items were being learnt:
    # the curve is the cost of keeping them, not of the pause.
    config.learn_limit = daily_new_limit if daily_new_limit > 0 else DEFAULT_NEW_PER_DAY
    config.review_limit = daily_review_limit
    config.max_ivl = float(maximum_interval_days)
    config.max_cost_perday = 24 * 3600.0
    points = []
    for retention in retentions:
        result = rs.simulate(list(weights), retention, config, CURVE_SEED)
        reviews = sum(result.review_cnt_per_day) + sum(result.learn_cnt_per_day)
        points.append(
            WorkloadPoint(
                retention=retention,
                reviews_per_day=reviews / CURVE_DAYS,
                minutes_per_day=sum(result.cost_per_day) / CURVE_DAYS / 60,
                memorized=float(result.memorized_cnt_per_day[-1]),
            )
        )
    # fsrs-rs answers in 32-bit floats (0.7 comes back as 0.69999999).
    minimum = round(float(rs.optimal_retention(config, list(weights))), 3)
    return WorkloadCurve(points=tuple(points), minimum_recommended=minimum)
