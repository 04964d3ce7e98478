import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill_course(apps, schema_editor):
    """Each schedule's course is its item's: one UPDATE over the table."""
    RecallSchedule = apps.get_model("quizzes", "RecallSchedule")
    QuizItem = apps.get_model("quizzes", "QuizItem")
    item_course = QuizItem.objects.filter(pk=OuterRef("item_id")).values("lesson__module__course_id")
    RecallSchedule.objects.update(course_id=Subquery(item_course))


class Migration(migrations.Migration):
    """The column is added empty, filled from each item's course, then made required."""

    dependencies = [
        ("courses", "0003_course_scheduling_bounds"),
        ("quizzes", "0008_reviewlog_drop_covered_fk_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="recallschedule",
            name="course",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="courses.course",
            ),
        ),
        migrations.RunPython(fill_course, migrations.RunPython.noop, elidable=False),
        migrations.AlterField(
            model_name="recallschedule",
            name="course",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="courses.course",
            ),
        ),
    ]
