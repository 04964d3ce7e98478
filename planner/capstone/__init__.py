"""The capstone: worksheets, submissions, the automatic check, rubrics and grading."""
