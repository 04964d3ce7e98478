"""Workload cards: the source's one card per workload, with its stored calculator result."""
