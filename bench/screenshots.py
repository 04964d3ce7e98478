"""Screenshots of the main pages at desktop (1280 px) and phone (375 px) width, for docs/.

    .venv/bin/python bench/screenshots.py [--out docs/screenshots]

Builds a throwaway embedded site (SQLite and file mail in a temporary folder): the shipped course,
the example workload cards, the demo learner and instructor, and one submitted capstone plan; runs
it with `manage.py runserver`, then drives Debian's Chromium through Playwright, logged in as each
demo user, and writes one PNG per page and width (the first screen of the page, not the whole
scroll, so each file stays small).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PASSWORD = "demo-password-123"
WIDTHS = {"desktop": (1280, 800), "phone": (375, 812)}

# A submitted plan for the demo learner, so the capstone and grading pages have something to show.
SUBMIT_PLAN = """
from courses.models import Course
from accounts.models import User
from planner.capstone.services import worksheet_autosave, worksheet_get_or_create, worksheet_submit
from planner.models import WorkloadCard
from django.utils import timezone
learner = User.objects.get(email="learner@demo.local")
course = Course.objects.first()
worksheet = worksheet_get_or_create(learner=learner, course=course)
cards = list(WorkloadCard.objects.filter(owner=learner)[:2])
worksheet_autosave(worksheet=worksheet, workload_cards=cards or None, data={
    "feature": "Live lesson chat",
    "user_problem": "Learners ask about a lesson and expect an answer within 2 s.",
    "workload_kind": "interactive_serving", "model_name": "7B instruct",
    "framework": "PyTorch + vLLM", "precision": "int8",
    "latency_target": "first token under 2 s, p95", "budget": "$900 a month",
    "gpu_memory_gb": 24, "model_gb": 14, "overhead_gb": 3, "kv_per_user_gb": 0.6,
    "concurrency": 20, "claimed_max_users": 11, "recommendation": "gpu",
    "recommendation_reasons": "A 7B model at int8 fits one 24 GB GPU.",
})
worksheet_submit(worksheet=worksheet, now=timezone.now())
"""

ANONYMOUS = [("home", "/"), ("login", "/accounts/login/")]
LEARNER = [
    ("dashboard", "/dashboard/"),
    ("course", "/courses/{course}/"),
    ("review", "/review/"),
    ("statistics", "/review/stats/"),
    (
        "calculator",
        "/planner/?estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&users=20&context_tokens=8192&prompt_tokens=4096&ttft_target_ms=2000",
    ),
    # The course source's three workload cards, each compared across the four paths.
    (
        "paths-live-chat",
        "/planner/paths/?estimate=serving&model=llama-3.1-8b&weight_precision=bf16&users=20&context_tokens=8192&ttft_target_ms=2000&requests_per_day=1000",
    ),
    (
        "paths-nightly-embeddings",
        "/planner/paths/?estimate=batch&items=50000&window_hours=2&model=bge-large-en-v1.5&tokens_per_item=400&output_tokens_per_item=0&retry_margin=0.2",
    ),
    (
        "paths-fine-tuning",
        "/planner/paths/?estimate=training&model=llama-3.1-8b&method=lora&batch_size=4&seq_len=2048&checkpointing=true&steps=1000",
    ),
    ("accessibility", "/accessibility/"),
    ("workload-cards", "/planner/cards/"),
    ("capstone-worksheet", "/capstone/courses/{course}/worksheet/"),
    ("capstone-submission", "/capstone/submissions/{submission}/"),
    ("preferences", "/accounts/preferences/"),
]
INSTRUCTOR = [
    ("instructor-home", "/dashboard/"),
    ("grading-queue", "/capstone/grading/"),
    ("grading", "/capstone/grading/{submission}/"),
    ("reminders", "/reminders/"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def build_site(env: dict[str, str]) -> dict[str, str]:
    manage(env, "migrate", "--no-input")
    manage(env, "import_course", "content/gpus-tpus-ai-hardware")
    manage(env, "seed_workload_cards")
    manage(env, "seed_demo")
    manage(env, "shell", "-c", SUBMIT_PLAN)
    ids = (
        manage(
            env,
            "shell",
            "-c",
            "from courses.models import Course; from planner.models import CapstoneSubmission; "
            "print('IDS', Course.objects.first().slug, CapstoneSubmission.objects.latest('pk').pk)",
        )
        .split("IDS")[-1]
        .split()
    )
    return {"course": ids[0], "submission": ids[1]}


def wait_for(url: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"the site did not answer at {url}")


def shoot(base: str, out: Path, ids: dict[str, str]) -> list[Path]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    written: list[Path] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        for email, pages in ((None, ANONYMOUS), ("learner", LEARNER), ("instructor", INSTRUCTOR)):
            for size, (width, height) in WIDTHS.items():
                context = browser.new_context(
                    base_url=base, viewport={"width": width, "height": height}
                )
                page = context.new_page()
                if email:
                    page.goto("/accounts/login/")
                    page.get_by_label("Email").fill(f"{email}@demo.local")
                    page.get_by_label("Password").fill(PASSWORD)
                    page.get_by_role("button", name="Log in", exact=True).click()
                    page.wait_for_url("**/dashboard/")
                for name, path in pages:
                    page.goto(path.format(**ids))
                    page.wait_for_load_state("networkidle")
                    target = out / f"{name}-{size}.png"
                    page.screenshot(path=str(target))
                    written.append(target)
                context.close()
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="recall-shots-") as tmp:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "REDIS_URL", "EMAIL_URL"}
        }
        env.update(
            VAR_DIR=tmp,
            DATABASE_URL=f"sqlite:///{tmp}/db.sqlite3",
            DJANGO_ENV="development",
            PYTHONPATH=str(ROOT),
        )
        ids = build_site(env)
        port = free_port()
        server = subprocess.Popen(
            [PYTHON, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env={**env, "SITE_URL": f"http://127.0.0.1:{port}"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(base + "/healthz")
            for path in shoot(base, args.out, ids):
                print(f"{path}  {path.stat().st_size // 1024} KB")
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
