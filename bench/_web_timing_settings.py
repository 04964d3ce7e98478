"""Settings for bench/web_breakdown.py's server: bench/web.py's (production settings, the bare
view) with the timing middleware first and its JSON view. Never used outside the benchmark."""

from _web_settings import *  # noqa: F403

ROOT_URLCONF = "_web_timing"
MIDDLEWARE = ["_web_timing.request_timing", *MIDDLEWARE]  # noqa: F405
