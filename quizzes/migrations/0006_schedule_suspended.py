from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("quizzes", "0005_fsrs_parameters")]

    operations = [
        migrations.AddField(
            model_name="recallschedule",
            name="suspended",
            field=models.BooleanField(default=False),
        ),
    ]
