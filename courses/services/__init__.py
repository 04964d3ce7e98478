"""Writes for courses: importing content, rendering lessons, enrolment and progress."""
