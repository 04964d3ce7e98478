# The data half of 0008: a migration of its own, so that on PostgreSQL its row writes never share
# a transaction with 0008's ALTER TABLE (pending trigger events refuse the ALTER).

from django.db import migrations


def peer_grades_backfill(apps, schema_editor):
    """Plans graded by peers before the gradebook took peer grades get theirs now, released when
    the peers decided (their learners were emailed then: no email now)."""
    PeerPlan = apps.get_model("planner", "PeerPlan")
    Grade = apps.get_model("planner", "Grade")
    GradeChange = apps.get_model("planner", "GradeChange")
    CriterionScore = apps.get_model("planner", "CriterionScore")
    Level = apps.get_model("planner", "Level")
    plans = PeerPlan.objects.filter(state="graded", run_tag="", submission__grade__isnull=True)
    for plan in plans.iterator(chunk_size=500):
        ids = [c["level_id"] for c in (plan.result.get("criteria") or {}).values()]
        levels = list(Level.objects.filter(pk__in=ids, criterion__rubric__course_id=plan.course_id))
        best = {}
        for lv in Level.objects.filter(criterion__rubric__course_id=plan.course_id):
            best[lv.criterion_id] = max(best.get(lv.criterion_id, 0), lv.points)
        grade = Grade.objects.create(
            submission_id=plan.submission_id,
            grader=None,
            origin="peers",
            status="released",
            total_points=sum(lv.points for lv in levels),
            max_points=sum(best.values()),
            released_at=plan.graded_at,
        )
        CriterionScore.objects.bulk_create(
            CriterionScore(grade=grade, criterion_id=lv.criterion_id, level=lv, points=lv.points)
            for lv in levels
        )
        GradeChange.objects.create(
            grade=grade, actor=None, action="peer_graded", changes={}, at=plan.graded_at
        )


def peer_grades_remove(apps, schema_editor):
    """Back to grades that always have a grader: the peers' grades and their records go."""
    apps.get_model("planner", "Grade").objects.filter(origin="peers").delete()
    apps.get_model("planner", "GradeChange").objects.filter(actor=None).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('planner', '0008_capstone_peer_gradebook'),
    ]

    operations = [
        migrations.RunPython(peer_grades_backfill, peer_grades_remove),
    ]
