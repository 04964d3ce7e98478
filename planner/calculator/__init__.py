"""The calculator's application layer: one calculation_run(kind, data) for the page, API, CLI, cards and capstone."""
