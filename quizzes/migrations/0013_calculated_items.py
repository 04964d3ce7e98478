"""Calculated items: the template on the quiz item, the learner's number on the review log."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("quizzes", "0012_review_rollups"),
    ]

    operations = [
        migrations.AlterField(
            model_name="quizitem",
            name="kind",
            field=models.CharField(
                choices=[
                    ("multiple_choice", "Multiple choice"),
                    ("numeric", "Numeric"),
                    ("free_recall", "Free recall"),
                    ("calculated", "Calculated"),
                ],
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="quizitem",
            name="calculation",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="reviewlog",
            name="answer_value",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="reviewlog",
            name="expected_value",
            field=models.FloatField(blank=True, null=True),
        ),
    ]
