"""Settings for bench/web.py's server: production settings plus a bench-only URLconf (the bare
view). Never used outside the benchmark."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "_web_urls"
