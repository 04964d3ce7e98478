import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# Django's names for the three foreign keys' own indexes (the same on PostgreSQL and SQLite).
COVERED_INDEXES = (
    "quizzes_reviewlog_item_id_6af64e35",
    "quizzes_reviewlog_learner_id_dae2b5e3",
    "quizzes_reviewlog_schedule_id_70e4d59e",
)


class Migration(migrations.Migration):
    """Each of these indexes leads another (the unique (schedule, key), (learner, time), (item,
    time)). Only the indexes go: AlterField would also drop and re-add each foreign key, which
    checks every review log again under a lock."""

    dependencies = [
        ("quizzes", "0007_schedule_suspended_db_default"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="reviewlog",
                    name="item",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="review_logs",
                        to="quizzes.quizitem",
                    ),
                ),
                migrations.AlterField(
                    model_name="reviewlog",
                    name="learner",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="review_logs",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="reviewlog",
                    name="schedule",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="logs",
                        to="quizzes.recallschedule",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    [f'DROP INDEX IF EXISTS "{name}"' for name in COVERED_INDEXES],
                    [
                        f'CREATE INDEX IF NOT EXISTS "{name}" ON "quizzes_reviewlog" ("{column}")'
                        for name, column in zip(
                            COVERED_INDEXES, ("item_id", "learner_id", "schedule_id"), strict=True
                        )
                    ],
                )
            ],
        )
    ]
