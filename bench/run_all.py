"""Run every benchmark in bench/ in turn and print their figures (`make bench`); with names
(`make bench BENCH="web reminder_send"`), only those."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    # screenshots.py makes docs/screenshots/, it measures nothing.
    scripts = {
        script.stem: script
        for script in sorted(HERE.glob("*.py"))
        if script.name not in {"run_all.py", "screenshots.py"} and not script.name.startswith("_")
    }
    chosen = sys.argv[1:] or list(scripts)
    unknown = [name for name in chosen if name not in scripts]
    if unknown:
        print(f"BENCH: no benchmark named {unknown[0]!r}; one of: {', '.join(scripts)}")
        return 2
    failed = 0
    for script in (scripts[name] for name in chosen):
        print(f"\n=== {script.name} ===", flush=True)
        failed += subprocess.call([sys.executable, str(script)], cwd=HERE.parent) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
