"""The peer grade model: each plan's true level per criterion from its peers' levels, correcting
each assessor's bias and weighting by their reliability. Pure Python, no Django.

The model is PG1 of Piech, Huang, Chen, Do, Ng and Koller, "Tuned Models of Peer Assessment in
MOOCs" (EDM 2013, section 3): an observed level z = s (the plan's true level on the criterion)
+ b (the assessor's bias) + noise of precision tau (the assessor's reliability), with a normal
prior on s, a normal prior on b centred on 0 and a gamma prior on tau. The paper fits it by
Gibbs sampling or EM; we take the deterministic route, alternating the conditional posterior
means (the MAP coordinate ascent the paper's EM reduces to), a few rounds. Calibration answers
are observations of a known s (the staff level), so they inform b and tau directly.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

# Priors, in levels. The true level's prior: the criterion's mean over all observations with a
# standard deviation of one level (Piech et al. centre the true-score prior on the class mean).
TRUE_LEVEL_PRIOR_SD = 1.0
# Bias prior: N(0, 0.75²) — a bias of a whole level needs several observations to be believed
# (Piech et al. use a zero-mean normal prior on bias, fitted to their data; we shrink harder
# because each assessor here grades 3 plans, not 5+).
BIAS_PRIOR_SD = 1.0
# Reliability prior Gamma(alpha, beta), mean alpha/beta = 2 (a noise sd of ~0.7 level); the
# shape is the paper's form of the prior on tau (PG1, "tau_v ~ Gamma(alpha, beta)").
RELIABILITY_ALPHA = 3.0
RELIABILITY_BETA = 1.5
ROUNDS = 25
# Down-weighting, shown to instructors: a noise sd above 1 level (reliability below 1.0)
# is an assessor answering near random on a 4-level scale; a bias beyond 1.5 levels is extreme.
UNRELIABLE_BELOW = 1.0
EXTREME_BIAS = 1.5
# A failed calibration keeps a quarter of the assessor's weight until their answers prove them.
FAILED_CALIBRATION_WEIGHT = 0.25
DOWN_WEIGHT = 0.25
# Confidence from the posterior sd of the true level.
HIGH_CONFIDENCE_SD = 0.35
MEDIUM_CONFIDENCE_SD = 0.6


@dataclass(frozen=True)
class Observation:
    """One assessor's level (0 = lowest) for one plan on one criterion."""

    assessor: int
    plan: int
    criterion: int
    level: int


@dataclass(frozen=True)
class CalibrationObservation:
    """One assessor's level for a calibration example whose staff level is `truth`."""

    assessor: int
    criterion: int
    level: int
    truth: int


@dataclass(frozen=True)
class AssessorEstimate:
    bias: float
    reliability: float
    weight: float
    down_weighted: bool
    why: str


@dataclass(frozen=True)
class CriterionGrade:
    level: int
    estimate: float
    sd: float
    confidence: str


@dataclass(frozen=True)
class PeerFit:
    grades: dict[tuple[int, int], CriterionGrade]  # (plan, criterion) -> grade
    assessors: dict[int, AssessorEstimate]


def confidence_label(sd: float) -> str:
    if sd <= HIGH_CONFIDENCE_SD:
        return "high"
    return "medium" if sd <= MEDIUM_CONFIDENCE_SD else "low"


def _clip(value: float, top: int) -> int:
    return max(0, min(top, round(value)))


def peer_fit(
    observations: Iterable[Observation],
    calibration: Iterable[CalibrationObservation] = (),
    *,
    top_level: dict[int, int],
    failed_calibration: frozenset[int] = frozenset(),
    rounds: int = ROUNDS,
) -> PeerFit:
    """Fit PG1 and return every observed (plan, criterion)'s grade and every assessor's bias,
    reliability and weight. `top_level[criterion]` is the criterion's highest level index."""
    obs = list(observations)
    cal = list(calibration)
    by_item: dict[tuple[int, int], list[Observation]] = defaultdict(list)
    by_assessor: dict[int, list[Observation]] = defaultdict(list)
    cal_by_assessor: dict[int, list[CalibrationObservation]] = defaultdict(list)
    for o in obs:
        by_item[(o.plan, o.criterion)].append(o)
        by_assessor[o.assessor].append(o)
    for c in cal:
        cal_by_assessor[c.assessor].append(c)
    crit_levels: dict[int, list[int]] = defaultdict(list)
    for o in obs:
        crit_levels[o.criterion].append(o.level)
    prior_mean = {c: statistics.fmean(v) for c, v in crit_levels.items()}
    assessors = set(by_assessor) | set(cal_by_assessor)
    bias = dict.fromkeys(assessors, 0.0)
    tau = dict.fromkeys(assessors, RELIABILITY_ALPHA / RELIABILITY_BETA)
    weight = dict.fromkeys(assessors, 1.0)
    true: dict[tuple[int, int], float] = {k: prior_mean[k[1]] for k in by_item}
    precision: dict[tuple[int, int], float] = {}
    prior_precision = 1 / TRUE_LEVEL_PRIOR_SD**2
    for _round in range(rounds):
        for key, items in by_item.items():
            num = prior_mean[key[1]] * prior_precision
            den = prior_precision
            for o in items:
                w = tau[o.assessor] * weight[o.assessor]
                num += w * (o.level - bias[o.assessor])
                den += w
            true[key] = num / den
            precision[key] = den
        for a in assessors:
            residuals = [o.level - true[(o.plan, o.criterion)] for o in by_assessor[a]]
            residuals += [c.level - c.truth for c in cal_by_assessor[a]]
            n = len(residuals)
            bias[a] = tau[a] * sum(residuals) / (1 / BIAS_PRIOR_SD**2 + n * tau[a])
            squares = sum((r - bias[a]) ** 2 for r in residuals)
            tau[a] = (RELIABILITY_ALPHA + n / 2) / (RELIABILITY_BETA + squares / 2)
            weight[a] = _weight(a, bias[a], tau[a], failed_calibration)
    grades = {
        key: CriterionGrade(
            level=_clip(true[key], top_level.get(key[1], 0)),
            estimate=true[key],
            sd=precision[key] ** -0.5,
            confidence=confidence_label(precision[key] ** -0.5),
        )
        for key in by_item
    }
    return PeerFit(
        grades=grades,
        assessors={
            a: AssessorEstimate(
                bias=bias[a],
                reliability=tau[a],
                weight=weight[a],
                down_weighted=weight[a] < 1.0,
                why=_why(a, bias[a], tau[a], failed_calibration),
            )
            for a in assessors
        },
    )


def _weight(assessor: int, bias: float, tau: float, failed: frozenset[int]) -> float:
    weight = 1.0
    if assessor in failed:
        weight *= FAILED_CALIBRATION_WEIGHT
    if tau < UNRELIABLE_BELOW or abs(bias) > EXTREME_BIAS:
        weight *= DOWN_WEIGHT
    return weight


def _why(assessor: int, bias: float, tau: float, failed: frozenset[int]) -> str:
    reasons = []
    if assessor in failed:
        reasons.append("failed calibration")
    if tau < UNRELIABLE_BELOW:
        reasons.append(f"unreliable (noise sd {tau**-0.5:.1f} levels)")
    if abs(bias) > EXTREME_BIAS:
        reasons.append(f"extreme bias ({bias:+.1f} levels)")
    return "; ".join(reasons)


def median_grades(observations: Iterable[Observation]) -> dict[tuple[int, int], float]:
    """The plain median of each (plan, criterion)'s levels: the baseline the model must beat."""
    by_item: dict[tuple[int, int], list[int]] = defaultdict(list)
    for o in observations:
        by_item[(o.plan, o.criterion)].append(o.level)
    return {key: statistics.median(levels) for key, levels in by_item.items()}


def disagreements(
    observations: Iterable[Observation], fit: PeerFit, *, more_than: float = 1.0
) -> dict[tuple[int, int], float]:
    """(plan, criterion) whose trusted assessors' bias-corrected levels differ by more than
    `more_than` levels: the spread, for the instructor's flag. Down-weighted assessors are
    left out (they are flagged on their own); their answers alone never flag a plan."""
    corrected: dict[tuple[int, int], list[int]] = defaultdict(list)
    for o in observations:
        estimate = fit.assessors[o.assessor]
        if not estimate.down_weighted:
            corrected[(o.plan, o.criterion)].append(round(o.level - estimate.bias))
    return {
        key: max(values) - min(values)
        for key, values in corrected.items()
        if len(values) > 1 and max(values) - min(values) > more_than
    }
