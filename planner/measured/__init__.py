"""A load test's result beside the engine's prediction: the page, the JSON API and the CLI."""
