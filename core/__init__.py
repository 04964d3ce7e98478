"""The bottom layer: small pure helpers every app may use (it imports nothing from the project)."""
