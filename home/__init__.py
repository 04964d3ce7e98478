"""The top of the project: pages and commands that span apps (home, dashboard, demo data,
content import). Nothing below imports from here."""
