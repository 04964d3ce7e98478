from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("quizzes", "0006_schedule_suspended")]

    operations = [
        migrations.AlterField(
            model_name="recallschedule",
            name="suspended",
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
