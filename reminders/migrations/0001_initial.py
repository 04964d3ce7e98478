"""ReminderDigest joins the reminders app from quizzes. Its table (`quizzes_reminderdigest`), its
rows, constraint and index stay where they are: only Django's state moves, and the admin
permissions follow the model's content type."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_type_to(app_label):
    def move(apps, schema_editor):
        ContentType = apps.get_model("contenttypes", "ContentType")
        ContentType.objects.filter(model="reminderdigest").exclude(app_label=app_label).update(
            app_label=app_label
        )

    return move


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("quizzes", "0003_drop_redundant_schedule_learner_index"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ReminderDigest",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("local_date", models.DateField()),
                        ("status", models.CharField(choices=[("pending", "Pending"), ("sending", "Sending"), ("sent", "Sent"), ("failed", "Failed"), ("skipped", "Skipped")], default="pending", max_length=10)),
                        ("due_count", models.PositiveIntegerField(default=0)),
                        ("attempts", models.PositiveSmallIntegerField(default=0)),
                        ("message_id", models.CharField(blank=True, max_length=255)),
                        ("last_error", models.TextField(blank=True)),
                        ("history", models.JSONField(blank=True, default=list)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("sent_at", models.DateTimeField(blank=True, null=True)),
                        ("first_item", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="quizzes.quizitem")),
                        ("learner", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="reminder_digests", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "quizzes_reminderdigest",
                        "ordering": ["-created_at"],
                        "indexes": [models.Index(fields=["status", "created_at"], name="digest_status_created")],
                        "constraints": [models.UniqueConstraint(fields=("learner", "local_date"), name="digest_unique_per_local_date")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_to("reminders"), content_type_to("quizzes")),
    ]
