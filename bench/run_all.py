"""Run every benchmark in bench/ in turn and print their figures (`make bench`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = 0
    for script in sorted(HERE.glob("*.py")):
        # screenshots.py makes docs/screenshots/, it measures nothing.
        if script.name in {"run_all.py", "screenshots.py"} or script.name.startswith("_"):
            continue
        print(f"\n=== {script.name} ===", flush=True)
        failed += subprocess.call([sys.executable, str(script)], cwd=HERE.parent) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
