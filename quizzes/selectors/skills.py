"""Skills maps: per course skill, a learner's recall strength now (mean FSRS retrievability of
their cards of its items), reviews and last result; and the cohort's, from the nightly analysis."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from accounts.models import User
from courses.models import Course
from quizzes.models import CourseSkill, ItemAnalysis, QuizItem, RecallSchedule, ReviewLog
from quizzes.services import fsrs_adapter


@dataclass(frozen=True)
class SkillStrength:
    skill: CourseSkill
    items: int
    cards: int  # the learner's recall schedules of the skill's items
    strength: float | None  # mean probability of recall now over those cards; None if none
    reviews: int
    last_rating: int | None
    last_reviewed_at: datetime | None

    @property
    def last_result(self) -> str:
        if self.last_rating is None:
            return ""
        return str(ReviewLog.Rating(self.last_rating).label)


@dataclass(frozen=True)
class SkillsMap:
    course: Course
    skills: list[SkillStrength]

    @property
    def weakest(self) -> SkillStrength | None:
        """The started skill with the lowest recall strength (ties: the course's order)."""
        started = [s for s in self.skills if s.strength is not None]
        return min(started, key=lambda s: s.strength or 0.0) if started else None


def course_skills(*, course: Course) -> list[CourseSkill]:
    return list(CourseSkill.objects.filter(course=course).order_by("position", "id"))


def skill_items(*, course: Course, skill: CourseSkill) -> list[QuizItem]:
    """The skill's items in course order, with their choices (two queries)."""
    items = (
        QuizItem.objects.filter(lesson__module__course=course)
        .select_related("lesson")
        .prefetch_related("choices")
        .order_by("lesson__module__position", "lesson__position", "position", "id")
    )
    return [i for i in items if skill.slug in i.skills]


def learner_skills_map(*, learner: User, course: Course, now: datetime) -> SkillsMap:
    """The learner's map of the course (five queries: skills, items, schedules, the scheduling
    row, review logs)."""
    skills = course_skills(course=course)
    item_skills = dict(
        QuizItem.objects.filter(lesson__module__course=course).values_list("id", "skills")
    )
    schedules = list(RecallSchedule.objects.filter(learner=learner, item_id__in=list(item_skills)))
    scheduler = fsrs_adapter.scheduler_for(
        course, fsrs_adapter.scheduling_for(course=course, learner_id=learner.pk)
    )
    recall: dict[int, float] = {}
    for schedule in schedules:
        if schedule.last_review is None or schedule.stability is None:
            recall[schedule.item_id] = 0.0
        else:
            card = fsrs_adapter.card_from_schedule(schedule)
            recall[schedule.item_id] = fsrs_adapter.retrievability(
                scheduler=scheduler, card=card, now=now
            )
    reviews: dict[int, int] = {}
    last: dict[int, tuple[datetime, int]] = {}
    logs = ReviewLog.objects.filter(
        learner=learner, item_id__in=list(item_skills), undo__isnull=True
    ).values_list("item_id", "reviewed_at", "rating")
    for item_id, reviewed_at, rating in logs:
        reviews[item_id] = reviews.get(item_id, 0) + 1
        if item_id not in last or reviewed_at >= last[item_id][0]:
            last[item_id] = (reviewed_at, rating)
    rows = []
    for skill in skills:
        ids = [i for i, tags in item_skills.items() if skill.slug in (tags or [])]
        strengths = [recall[i] for i in ids if i in recall]
        latest = max((last[i] for i in ids if i in last), default=None)
        rows.append(
            SkillStrength(
                skill=skill,
                items=len(ids),
                cards=len(strengths),
                strength=sum(strengths) / len(strengths) if strengths else None,
                reviews=sum(reviews.get(i, 0) for i in ids),
                last_rating=latest[1] if latest else None,
                last_reviewed_at=latest[0] if latest else None,
            )
        )
    return SkillsMap(course=course, skills=rows)


@dataclass(frozen=True)
class CohortSkill:
    skill: CourseSkill
    items: int
    cards: int
    strength: float | None  # mean recall now over every learner's cards, at the analysis time
    facility: float | None  # share of first answers right, over the skill's items
    responses: int


def cohort_skills_map(*, course: Course) -> tuple[list[CohortSkill], ItemAnalysis | None]:
    """The cohort's map, from the stored nightly analysis (two queries; no log scan)."""
    skills = course_skills(course=course)
    analysis = ItemAnalysis.objects.filter(course=course).first()
    items: list[dict[str, Any]] = analysis.report.get("items", []) if analysis else []
    rows = []
    for skill in skills:
        mine = [r for r in items if skill.slug in r.get("skills", [])]
        cards = sum(r.get("cards", 0) for r in mine)
        recall_sum = sum((r.get("recall_now") or 0.0) * r.get("cards", 0) for r in mine)
        responses = sum(r["responses"] for r in mine)
        correct = sum(r["correct"] for r in mine)
        rows.append(
            CohortSkill(
                skill=skill,
                items=len(mine),
                cards=cards,
                strength=recall_sum / cards if cards else None,
                facility=correct / responses if responses else None,
                responses=responses,
            )
        )
    return rows, analysis
