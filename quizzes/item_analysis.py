"""Classical item analysis over each learner's first answer to each item: facility,
discrimination, point-biserial and flags. Pure Python, no Django: the nightly job feeds it rows.

Method (the figures Moodle's quiz statistics report, docs.moodle.org/en/Quiz_statistics_calculations,
and Canvas's item analysis):
- a response is a learner's FIRST review log of the item (not undone); it is correct when rated
  above Again;
- facility = correct responses / responses (Moodle's "facility index");
- a learner's rest score for an item = their facility over the course's OTHER items they answered;
- discrimination = facility among the upper 27 % of learners ranked by rest score minus facility
  among the lower 27 % (Kelley, T. L. (1939) "The selection of upper and lower groups for the
  validation of test items", J. Educ. Psych. 30: 17-24: 27 % maximises the groups' difference
  for a normal score distribution);
- point_biserial = Pearson correlation of the 0/1 first answer with the rest score (Moodle's
  "discrimination index" is this correlation against the rest of the test);
- for a choice item, each choice's share = first answers that picked it / first answers that
  recorded their choices (Canvas's item analysis "answer frequencies"; a learner may pick several
  on a many-answer item, so the shares can sum past 1). A distractor nobody picked does no work:
  it only lengthens the item (Haladyna, T. M. & Downing, S. M. (1993) "How many options is
  enough for a multiple-choice test item?", Educ. Psych. Measurement 53: 999-1010).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

# Kelley (1939): the upper and lower 27 % of learners.
KELLEY_SHARE = 0.27
# Flags. Moodle's quiz statistics docs call a facility above 90 % "very easy" and below 20 %
# "very difficult"; a negative discrimination index "indicates something is wrong with the
# question" (docs.moodle.org/en/Quiz_report_statistics, "Facility index" and "Discrimination").
TOO_EASY_ABOVE = 0.9
TOO_HARD_BELOW = 0.2
# Below this many first answers the figures are noise: Moodle's docs warn that statistics of a
# small sample "are not reliable"; 20 is the common rule of thumb for item statistics.
MIN_RESPONSES = 20
# The first answer's rating above which it counts as correct (1 = Again).
AGAIN = 1

FLAG_NEGATIVE_DISCRIMINATION = "negative_discrimination"
FLAG_TOO_EASY = "too_easy"
FLAG_TOO_HARD = "too_hard"
FLAG_DISTRACTOR_NEVER_CHOSEN = "distractor_never_chosen"
FLAG_FEW_RESPONSES = "few_responses"
# Answers logged before the review log kept the choices picked carry none: shares are over the
# first answers that did, and the distractor flag waits for MIN_RESPONSES of them.
CHOICE_SHARES_NOTE = (
    "Choice shares are over the first answers that recorded the choices picked (answers logged "
    "before 5 December 2026 did not); a distractor is flagged when nobody picked it in at least "
    f"{MIN_RESPONSES} of them."
)


@dataclass(frozen=True)
class FirstAnswer:
    """One learner's first answer to one item."""

    learner_id: int
    item_id: int
    rating: int
    # The choice keys picked (a choice item's first answer); None where the log has none.
    choices: tuple[str, ...] | None = None

    @property
    def correct(self) -> int:
        return 1 if self.rating > AGAIN else 0


@dataclass(frozen=True)
class ChoiceShare:
    key: str
    correct: bool
    chosen: int
    share: float | None

    def as_dict(self) -> dict[str, object]:
        return {
            "key": self.key,
            "correct": self.correct,
            "chosen": self.chosen,
            "share": self.share,
        }


@dataclass(frozen=True)
class ItemFigures:
    item_id: int
    responses: int
    correct: int
    facility: float | None
    discrimination: float | None
    point_biserial: float | None
    flags: tuple[str, ...] = field(default=())
    # A choice item's first answers that recorded their choices, and each choice's share of them.
    choice_responses: int = 0
    choice_shares: tuple[ChoiceShare, ...] | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "item_id": self.item_id,
            "responses": self.responses,
            "correct": self.correct,
            "facility": self.facility,
            "discrimination": self.discrimination,
            "point_biserial": self.point_biserial,
            "flags": list(self.flags),
            "choice_responses": self.choice_responses,
            "choice_shares": None
            if self.choice_shares is None
            else [share.as_dict() for share in self.choice_shares],
        }


def _per_learner(rows: Iterable[FirstAnswer]) -> dict[int, dict[int, FirstAnswer]]:
    """learner -> item -> first answer; a second row for the same pair is ignored."""
    answers: dict[int, dict[int, FirstAnswer]] = {}
    for row in rows:
        answers.setdefault(row.learner_id, {}).setdefault(row.item_id, row)
    return answers


def _grouped(rows: Iterable[FirstAnswer]) -> Iterator[tuple[int, dict[int, FirstAnswer]]]:
    """Like `_per_learner`, one learner at a time, for rows that keep each learner's together
    (the database's order): memory for one learner, not the cohort. A learner seen again after
    another's rows is an error, never a silently split learner."""
    done: set[int] = set()
    current: int | None = None
    mine: dict[int, FirstAnswer] = {}
    for row in rows:
        if row.learner_id != current:
            if current is not None:
                yield current, mine
                done.add(current)
            if row.learner_id in done:
                raise ValueError(f"learner {row.learner_id}'s rows are not together")
            current, mine = row.learner_id, {}
        mine.setdefault(row.item_id, row)
    if current is not None:
        yield current, mine


@dataclass
class _Scores:
    """One item's responses with a rest score, in compact arrays (a cohort of 100,000 learners
    keeps millions of them): rest score, learner id (ties are broken by it), correct 0/1."""

    rests: array[float] = field(default_factory=lambda: array("d"))
    learners: array[int] = field(default_factory=lambda: array("q"))
    corrects: array[int] = field(default_factory=lambda: array("b"))

    def add(self, rest: float, learner_id: int, correct: int) -> None:
        self.rests.append(rest)
        self.learners.append(learner_id)
        self.corrects.append(correct)


def kelley_discrimination(scores: _Scores) -> float | None:
    """Upper-27 % facility minus lower-27 % facility, learners ranked by rest score; ties are
    broken by learner id so the result is reproducible."""
    n = len(scores.rests)
    if n < 2:
        return None
    rests, learners, corrects = scores.rests, scores.learners, scores.corrects
    ranked = sorted(range(n), key=lambda k: (rests[k], learners[k]))
    group = max(1, round(KELLEY_SHARE * n))
    upper = sum(corrects[k] for k in ranked[-group:])
    lower = sum(corrects[k] for k in ranked[:group])
    return (upper - lower) / group


def point_biserial(scores: _Scores) -> float | None:
    """Pearson correlation of correct (0/1) with the rest score; None when either is constant."""
    n = len(scores.rests)
    if n < 2:
        return None
    mean_x = sum(scores.corrects) / n
    mean_y = sum(scores.rests) / n
    sxy = sxx = syy = 0.0
    for rest, correct in zip(scores.rests, scores.corrects, strict=True):
        dx, dy = correct - mean_x, rest - mean_y
        sxy += dx * dy
        sxx += dx * dx
        syy += dy * dy
    if sxx <= 0 or syy <= 0:
        return None
    r = sxy / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


def item_flags(
    *,
    responses: int,
    facility: float | None,
    discrimination: float | None,
    min_responses: int = MIN_RESPONSES,
    choice_responses: int = 0,
    choice_shares: Sequence[ChoiceShare] | None = None,
) -> tuple[str, ...]:
    flags: list[str] = []
    if responses < min_responses:
        flags.append(FLAG_FEW_RESPONSES)
    if discrimination is not None and discrimination < 0:
        flags.append(FLAG_NEGATIVE_DISCRIMINATION)
    if facility is not None and facility > TOO_EASY_ABOVE:
        flags.append(FLAG_TOO_EASY)
    if facility is not None and facility < TOO_HARD_BELOW:
        flags.append(FLAG_TOO_HARD)
    if choice_shares is not None and choice_responses >= min_responses:
        if any(not share.correct and share.chosen == 0 for share in choice_shares):
            flags.append(FLAG_DISTRACTOR_NEVER_CHOSEN)
    return tuple(flags)


def _shares(
    options: Sequence[tuple[str, bool]] | None, picked: tuple[int, Counter[str]]
) -> tuple[ChoiceShare, ...] | None:
    """Each of the item's choices (key, is correct), in order, with how often it was picked."""
    if options is None:
        return None
    answered, counts = picked
    return tuple(
        ChoiceShare(key, correct, counts[key], counts[key] / answered if answered else None)
        for key, correct in options
    )


def item_analysis(
    rows: Iterable[FirstAnswer],
    *,
    item_ids: Iterable[int],
    min_responses: int = MIN_RESPONSES,
    grouped: bool = False,
    choices: Mapping[int, Sequence[tuple[str, bool]]] | None = None,
) -> list[ItemFigures]:
    """Every item of `item_ids` (in that order) with its figures over the first answers.
    `grouped`: each learner's rows come together (as the database orders them), so they are
    read one learner at a time. `choices`: each choice item's choices, (key, is correct) in
    order, for the shares and the distractor flag."""
    learners = _grouped(rows) if grouped else iter(_per_learner(rows).items())
    scores: dict[int, _Scores] = {}
    counts: dict[int, list[int]] = {}  # item -> [responses, correct]
    picked: dict[int, tuple[int, Counter[str]]] = {}  # item -> (answers with choices, counts)
    for learner_id, mine in learners:
        total = sum(answer.correct for answer in mine.values())
        others = len(mine) - 1
        for item_id, answer in mine.items():
            correct = answer.correct
            count = counts.setdefault(item_id, [0, 0])
            count[0] += 1
            count[1] += correct
            if answer.choices is not None:
                answered, tally = picked.get(item_id, (0, Counter()))
                tally.update(set(answer.choices))
                picked[item_id] = (answered + 1, tally)
            if others > 0:
                rest = (total - correct) / others
                scores.setdefault(item_id, _Scores()).add(rest, learner_id, correct)
    figures: list[ItemFigures] = []
    for item_id in item_ids:
        n, correct = counts.get(item_id, (0, 0))
        facility = correct / n if n else None
        item_scores = scores.get(item_id, _Scores())
        discrimination = kelley_discrimination(item_scores)
        answered, tally = picked.get(item_id, (0, Counter()))
        shares = _shares((choices or {}).get(item_id), (answered, tally))
        figures.append(
            ItemFigures(
                item_id=item_id,
                responses=n,
                correct=correct,
                facility=facility,
                discrimination=discrimination,
                point_biserial=point_biserial(item_scores),
                flags=item_flags(
                    responses=n,
                    facility=facility,
                    discrimination=discrimination,
                    min_responses=min_responses,
                    choice_responses=answered,
                    choice_shares=shares,
                ),
                choice_responses=answered,
                choice_shares=shares,
            )
        )
    return figures
