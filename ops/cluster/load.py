"""The run's users, driven through the proxy over HTTPS: learners who review their cards (the
htmx requests a browser sends) and instructors who claim, grade and release capstone plans.

Every request is one attempt in the record, with an `X-Request-ID` the proxy logs. A request
that gets no answer, or a 5xx, is sent again (the same form: a grade keeps its card token) after
a short wait, as a person clicking again would; each try is recorded.
"""

from __future__ import annotations

import html
import http.client
import itertools
import random
import re
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

from ops.cluster.records import Attempt, PostedGrade, Release

# A person tries again a few times over about half a minute, then gives up.
RETRIES = 20
RETRY_WAIT = 1.0
TIMEOUT = 30.0
_INPUT = re.compile(r"<input\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')
_FORM = re.compile(r"<form\b([^>]*)>(.*?)</form>", re.IGNORECASE | re.DOTALL)


def hidden_inputs(fragment: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for tag in _INPUT.findall(fragment):
        attrs = {k: html.unescape(v) for k, v in _ATTR.findall(tag)}
        if attrs.get("type") == "hidden" and "name" in attrs:
            fields[attrs["name"]] = attrs.get("value", "")
    return fields


def form_with_class(page: str, css_class: str) -> str | None:
    for attrs, body in _FORM.findall(page):
        if re.search(rf'class="[^"]*\b{re.escape(css_class)}\b', attrs):
            return str(body)
    return None


def level_choices(page: str) -> dict[str, list[str]]:
    """The grading form's radio buttons: level_<criterion> -> its level ids."""
    choices: dict[str, list[str]] = {}
    for tag in _INPUT.findall(page):
        attrs = dict(_ATTR.findall(tag))
        if attrs.get("type") == "radio" and attrs.get("name", "").startswith("level_"):
            choices.setdefault(attrs["name"], []).append(attrs.get("value", ""))
    return choices


@dataclass
class Recorder:
    """What every user did, shared by their threads."""

    started: float = field(default_factory=time.monotonic)
    attempts: list[Attempt] = field(default_factory=list)
    grades: list[PostedGrade] = field(default_factory=list)
    releases: list[Release] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def next_id(self, run: str) -> str:
        with self.lock:
            return f"{run}-{next(self._ids)}"


@dataclass
class Answer:
    status: int
    body: str
    location: str


class Client:
    """One user's browser: cookies kept, a new TLS connection per request (as a buffering proxy
    sees it), redirects returned rather than followed."""

    def __init__(
        self, *, host: str, tls: ssl.SSLContext, recorder: Recorder, run: str, actor: str
    ) -> None:
        self.host = host
        self.tls = tls
        self.recorder = recorder
        self.run = run
        self.actor = actor
        self.cookies: dict[str, str] = {}

    def _once(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Answer:
        conn = http.client.HTTPSConnection(self.host, 443, timeout=TIMEOUT, context=self.tls)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            text = response.read().decode(errors="replace")
            for name, value in response.getheaders():
                if name.lower() == "set-cookie":
                    cookie, _, _ = value.partition(";")
                    key, _, val = cookie.partition("=")
                    self.cookies[key.strip()] = val.strip()
            return Answer(response.status, text, response.getheader("Location", "") or "")
        finally:
            conn.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        data: dict[str, str] | None = None,
        htmx: bool = False,
        expect: tuple[int, ...] = (200,),
        retried_ok: tuple[int, ...] = (),
    ) -> Answer | None:
        """Send until an answer other than a 5xx (or no answer) comes, at most RETRIES times.
        `retried_ok` answers count as expected once an earlier try failed (e.g. a 409 "already
        released"). None when every try failed."""
        body = urlencode(data).encode() if data is not None else None
        for attempt_no in range(RETRIES):
            rid = self.recorder.next_id(self.run)
            headers = {
                "Host": self.host,
                "X-Request-ID": rid,
                "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
            }
            if htmx:
                headers["HX-Request"] = "true"
            if body is not None:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                headers["Origin"] = f"https://{self.host}"
                headers["X-CSRFToken"] = self.csrf()
            started = time.monotonic()
            try:
                answer: Answer | None = self._once(method, path, body, headers)
            except (OSError, http.client.HTTPException):
                answer = None
            ended = time.monotonic()
            status = answer.status if answer else 0
            ok = status in expect or (attempt_no > 0 and status in retried_ok)
            with self.recorder.lock:
                self.recorder.attempts.append(
                    Attempt(rid, self.actor, f"{method} {_shape(path)}", started, ended, status, ok)
                )
            if answer is not None and status < 500:
                return answer if ok else None
            time.sleep(RETRY_WAIT)
        return None

    def csrf(self) -> str:
        return next((v for k, v in self.cookies.items() if k.endswith("csrftoken")), "")


def _shape(path: str) -> str:
    """A path without its ids and query, for grouping: /capstone/grading/12/save/ -> …/N/save/."""
    return re.sub(r"/\d+/", "/N/", path.split("?", 1)[0])


@dataclass(frozen=True)
class Pace:
    deadline: float  # time.monotonic() when users stop starting new actions
    think: tuple[float, float]  # seconds between actions, uniform


def learner(
    client: Client, *, pace: Pace, max_grades: int, rng: random.Random, stop: threading.Event
) -> None:
    """Review: the session's panel, reveal the card, grade it (htmx), and again with the next."""
    panel = client.request("GET", "/review/", htmx=True)
    graded = 0
    while panel is not None and graded < max_grades and not stop.is_set():
        reveal = form_with_class(panel.body, "reveal-form")
        if reveal is None or time.monotonic() > pace.deadline:
            return  # nothing due, or the run is over
        time.sleep(rng.uniform(*pace.think))
        card = client.request("GET", "/review/?" + urlencode(hidden_inputs(reveal)), htmx=True)
        if card is None:
            return
        grade_form = form_with_class(card.body, "grade-form")
        if grade_form is None:  # graded elsewhere: the next panel came back
            panel = card
            continue
        fields = hidden_inputs(grade_form)
        rating = rng.choice((1, 2, 3, 3, 3, 4))
        time.sleep(rng.uniform(*pace.think))
        panel = client.request(
            "POST", "/review/grade/", data={**fields, "rating": str(rating)}, htmx=True
        )
        with client.recorder.lock:
            client.recorder.grades.append(
                PostedGrade(client.actor, fields["card_token"], rating, panel is not None)
            )
        graded += 1


def log_in(client: Client, *, email: str, password: str) -> bool:
    if client.request("GET", "/accounts/login/") is None:
        return False
    answer = client.request(
        "POST", "/accounts/login/", data={"login": email, "password": password}, expect=(302,)
    )
    return answer is not None


def instructor(
    client: Client,
    *,
    submissions: list[int],
    pace: Pace,
    rng: random.Random,
    stop: threading.Event,
    on_release: Callable[[int], None] = lambda _: None,
) -> None:
    """Grade: the queue, claim a plan, open its rubric, release the grade; the next plan."""
    for submission_id in submissions:
        if time.monotonic() > pace.deadline or stop.is_set():
            return
        base = f"/capstone/grading/{submission_id}/"
        if client.request("GET", "/capstone/grading/") is None:
            return
        if client.request("POST", base + "claim/", data={}, expect=(302,)) is None:
            return
        page = client.request("GET", base)
        if page is None:
            return
        levels = {name: rng.choice(ids) for name, ids in level_choices(page.body).items()}
        time.sleep(rng.uniform(*pace.think))
        released = client.request(
            "POST",
            base + "save/",
            data={"action": "release", "overall_feedback": "Measured and clear.", **levels},
            expect=(302,),
            # A release that committed while its answer was lost is refused the second time.
            retried_ok=(409,),
        )
        with client.recorder.lock:
            client.recorder.releases.append(Release(submission_id, released is not None))
        on_release(submission_id)
        time.sleep(rng.uniform(*pace.think))


def tls_context(cafile: str) -> ssl.SSLContext:
    # The proxy's self-signed certificate names its address (subjectAltName IP), checked as such.
    return ssl.create_default_context(cafile=cafile)
