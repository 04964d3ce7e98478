"""Celery tasks for quizzes: thin wrappers that take ids and call a service."""

from __future__ import annotations
