"""The capstone area (/capstone/): learners' worksheets and versions, instructors' grading."""

from __future__ import annotations

from django.urls import path

from planner.capstone import grading_views as grading
from planner.capstone import peer_views as peer
from planner.capstone import rubric_views
from planner.capstone import views as capstone

app_name = "capstone"

urlpatterns = [
    path("", capstone.capstone_list, name="list"),
    path("courses/<slug:course_slug>/worksheet/", capstone.worksheet, name="worksheet"),
    path(
        "courses/<slug:course_slug>/worksheet/save/", capstone.worksheet_save, name="worksheet_save"
    ),
    path(
        "courses/<slug:course_slug>/worksheet/submit/",
        capstone.worksheet_submit_view,
        name="worksheet_submit",
    ),
    path("attach-comparison/", capstone.attach_comparison, name="attach_comparison"),
    path("submissions/<int:submission_id>/", capstone.submission_detail, name="submission"),
    path("grading/", grading.grading_queue, name="grading_queue"),
    path("grading/<int:submission_id>/", grading.grade, name="grade"),
    path("grading/<int:submission_id>/claim/", grading.claim, name="claim"),
    path("grading/<int:submission_id>/unclaim/", grading.unclaim, name="unclaim"),
    path("grading/<int:submission_id>/save/", grading.grade_save, name="grade_save"),
    path("courses/<slug:course_slug>/rubric/", rubric_views.rubric_edit, name="rubric"),
    path(
        "courses/<slug:course_slug>/rubric/criteria/<int:criterion_id>/",
        rubric_views.criterion_edit,
        name="criterion",
    ),
    path("courses/<slug:course_slug>/grades.csv", grading.grades_export, name="export"),
    path("courses/<slug:course_slug>/peer/", peer.peer, name="peer"),
    path("courses/<slug:course_slug>/peer/calibrate/", peer.peer_calibrate, name="peer_calibrate"),
    path("courses/<slug:course_slug>/peer/assign/", peer.peer_assign_view, name="peer_assign"),
    path("courses/<slug:course_slug>/peer/self/", peer.peer_self, name="peer_self"),
    path("courses/<slug:course_slug>/peer/settings/", peer.peer_settings, name="peer_settings"),
    path("peer/<int:assessment_id>/", peer.peer_assessment, name="peer_assessment"),
    path("peer/<int:assessment_id>/save/", peer.peer_assessment_save, name="peer_assessment_save"),
    path("submissions/<int:submission_id>/peer/", peer.peer_grade, name="peer_grade"),
]
