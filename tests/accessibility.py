"""axe-core over a page in the browser tests: the WCAG 2.0, 2.1 and 2.2 A and AA rules.

axe runs through Playwright's evaluate, which the page's content security policy does not see, so
the pages are checked exactly as they are served (nonces, no inline styles). Each page is checked
at its own width and at 375 px, in the light and the dark theme.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
PHONE = {"width": 375, "height": 812}


def axe_available() -> bool:
    return AXE.exists()


def violations(page: Any) -> list[str]:
    """One line per violation: the rule, its impact and the first few elements it names."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
        TAGS,
    )
    lines = []
    for v in result["violations"]:
        targets = [" ".join(map(str, node["target"])) for node in v["nodes"][:3]]
        lines.append(f"{v['id']} ({v['impact']}): {v['help']} at {', '.join(targets)}")
    return lines


def page_states(page: Any, *, all_widths: bool) -> dict[str, list[str]]:
    """The current page, light and dark, at its width (and at 375 px with `all_widths`): the
    violations of each state that has any."""
    found: dict[str, list[str]] = {}
    width = page.viewport_size or {"width": 1100, "height": 900}
    sizes = [("own width", width)] + ([("375 px", PHONE)] if all_widths else [])
    for size_name, size in sizes:
        page.set_viewport_size(size)
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            found[f"{page.url} at {size_name}, {scheme}"] = violations(page)
    page.set_viewport_size(width)
    page.emulate_media(color_scheme="light")
    return {state: lines for state, lines in found.items() if lines}


VNU = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"


class NuChecker:
    """The Nu HTML checker (vnu.jar) as a local HTTP service: started once, asked once per page."""

    def __init__(self) -> None:
        import socket
        import subprocess

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.process = subprocess.Popen(
            ["java", "-Xss1m", "-cp", str(VNU), "nu.validator.servlet.Main", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def errors(self, html: str) -> list[str]:
        import json
        import time
        import urllib.error
        import urllib.request

        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/?out=json",
            data=html.encode("utf-8"),
            headers={"Content-Type": "text/html; charset=utf-8"},
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    messages = json.load(response)["messages"]
                break
            except (ConnectionError, urllib.error.URLError):
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise
                time.sleep(0.25)
        return [
            f"line {m.get('lastLine')}: {m['message']}"
            for m in messages
            if m.get("type") == "error" or m.get("subType") == "fatal"
        ]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
