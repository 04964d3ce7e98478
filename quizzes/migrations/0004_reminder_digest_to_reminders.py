"""ReminderDigest leaves the quizzes app for the reminders app: state only, the table is kept."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("quizzes", "0003_drop_redundant_schedule_learner_index"),
        ("reminders", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ReminderDigest")],
            database_operations=[],
        ),
    ]
