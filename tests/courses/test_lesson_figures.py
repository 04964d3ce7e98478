"""Every figure the course's lessons and check-yourself items cite, recomputed through the capacity
engine, so the prose and the engine cannot drift apart.

Each row names the file, the text around the figure (`{}` marks the figure; other `{}` stand for
numbers that other rows check), the engine call that produces it and the rounding. After an engine
change, `python tests/courses/test_lesson_figures.py --refresh` rewrites the figures in place;
then reread the sentences around every changed figure.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

LESSONS = Path(__file__).resolve().parents[2] / "content" / "gpus-tpus-ai-hardware" / "lessons"
NUMBER = r"(-?[0-9][0-9,]*(?:\.[0-9]+)?)"


@dataclass(frozen=True)
class Figure:
    file: str  # under the course's lessons/
    text: str  # the text around the figure; `{}` marks a number
    value: Callable[[], float]
    fmt: str  # format spec: ",.2f", ".0f", "d"...
    which: int = 0  # which `{}` of the text is this figure
    after: str = (
        ""  # a line the figure follows (a quiz item's key); the search stops at the next item
    )

    @property
    def id(self) -> str:
        return f"{self.file}:{self.text[:40]}#{self.which}"


# --- the engine calls ---------------------------------------------------------------------------


@functools.cache
def calculator(query: str) -> dict[str, Any]:
    """The calculator's estimate for a query string, as the page and the lessons' links run it."""
    from django.http import QueryDict

    from planner.calculator.parsing import calculator_form_for, form_estimate

    data = QueryDict(query)
    form = calculator_form_for(data.get("estimate", ""), data)
    estimate = form_estimate(form)
    assert estimate is not None, (query, form.errors)
    result: dict[str, Any] = estimate.to_dict()
    return result


@functools.cache
def comparison(link: str) -> dict[str, Any]:
    """The comparison of paths a lesson's /planner/paths/ link shows."""
    from planner.paths.runs import comparison_for_link

    result = comparison_for_link(link)
    assert result is not None, link
    figures: dict[str, Any] = result.to_dict()
    return figures


@dataclass(frozen=True)
class Option:
    """A figure of one option in a comparison link's table; `query` names the page it is on."""

    link: str
    accelerator: str
    key: str
    count: int = 1

    @property
    def query(self) -> str:
        return self.link.split("?", 1)[1]

    def __call__(self) -> float:
        for row in comparison(self.link)["options"]:
            if row["accelerator"] == self.accelerator and row["count"] == self.count:
                return float(row[self.key] if self.key in row else row["figures"][self.key])
        raise AssertionError(f"no {self.count} x {self.accelerator} in {self.link}")


@dataclass(frozen=True)
class Calc:
    """A figure of the calculator's estimate for `query`, the page a lesson's link opens."""

    query: str
    key: str
    times: float = 1

    def __call__(self) -> float:
        return float(calculator(self.query)[self.key]) * self.times


def option(link: str, accelerator: str, key: str, count: int = 1) -> Option:
    return Option(link, accelerator, key, count)


def calc(query: str, key: str, times: float = 1) -> Calc:
    return Calc(query, key, times)


def ratio(first: Callable[[], float], second: Callable[[], float]) -> Callable[[], float]:
    return lambda: first() / second()


def catalogue(accelerator: str, field: str, times: float = 1) -> Callable[[], float]:
    def value() -> float:
        from planner.capacity import default_catalogue

        return float(getattr(default_catalogue().accelerator(accelerator), field)) * times

    return value


def exercise(name: str, **variables: object) -> Callable[[], float]:
    def value() -> float:
        from planner.capacity.exercises import solve_exercise

        return solve_exercise(name, variables).answer

    return value


def speed_constant(
    name: str, key: tuple[str, str] | None = None, times: float = 1
) -> Callable[[], float]:
    def value() -> float:
        from planner.capacity import speed_model

        constant = getattr(speed_model, name)
        return float((constant[key] if key else constant) * times)

    return value


# The nightly embedding card: 50,000 chunks of 400 tokens through the catalogue's BGE large encoder.
CHUNKS, CHUNK_TOKENS, ENCODER = 50_000, 400, "bge-large-en-v1.5"


def attention_share(prompt: int, model: str = "llama-3.1-8b") -> Callable[[], float]:
    """Attention's prefill FLOPs over a prompt, as a percentage of 2 x parameters a token."""

    def value() -> float:
        from planner.capacity import default_catalogue, speed_model

        spec = default_catalogue().model(model)
        pair = speed_model.attention_flops_per_pair(spec, 1)
        return float(prompt / 2 * pair / (2 * spec.params_b * 10**9) * 100)

    return value


def mig_sms(gpu: str, profile: str) -> Callable[[], float]:
    def value() -> float:
        from planner.capacity import default_catalogue

        acc = default_catalogue().accelerator(gpu)
        if profile == "all":
            return float(acc.sms or 0)
        return float(next(p.sms for p in acc.mig_profiles if p.name == profile) or 0)

    return value


def model_figure(model: str, field: str, times: float = 1) -> Callable[[], float]:
    def value() -> float:
        from planner.capacity import default_catalogue

        return float(getattr(default_catalogue().model(model), field)) * times

    return value


def fact(name: str, key: str, **variables: object) -> Callable[[], float]:
    def value() -> float:
        from planner.capacity.exercises import solve_exercise

        return float(solve_exercise(name, variables).facts[key].replace(",", ""))

    return value


# Lesson 7's worked spot run: 8 hours of work at $1.20 an hour, a 2-minute save every 30 minutes,
# 4 interruptions a day, 10 minutes to restart.
SPOT = {
    "work_hours": 8,
    "price_per_hour": 1.2,
    "checkpoint_every_minutes": 30,
    "checkpoint_save_minutes": 2,
    "interruptions_per_day": 4,
    "restart_minutes": 10,
}


def spot_run() -> Any:
    from planner.capacity.spot import spot_run as run

    return run(**{k: v for k, v in SPOT.items()})  # type: ignore[arg-type]


def training_mfu() -> float:
    """The training estimate's model FLOPs utilisation when none is measured, in percent."""
    from planner.capacity.training.speed import DEFAULT_MFU

    return float(DEFAULT_MFU * 100)


def encoder_flops() -> float:
    """The night's work: about 2 x parameters FLOPs per token (the speed model's forward pass)."""
    from planner.capacity import default_catalogue

    params = default_catalogue().model(ENCODER).params_b * 10**9
    return 2 * params * CHUNKS * CHUNK_TOKENS


# --- the queries the lessons' links and worked examples run ------------------------------------

CHAT = "estimate=serving&model=llama-3.1-8b&users=20&context_tokens=8192"
ONE = "estimate=serving&model=llama-3.1-8b&users=1&context_tokens=8192"
CHAT_L4, CHAT_A10G, CHAT_H100 = (f"{CHAT}&gpu={g}" for g in ("l4", "a10g", "h100-sxm"))
CHAT_H100_TP2 = f"{CHAT_H100}&tensor_parallel=2"
ONE_L4, ONE_A10G, ONE_H100 = (f"{ONE}&gpu={g}" for g in ("l4", "a10g", "h100-sxm"))
PROMPT = "&prompt_tokens=2000"
BURST = "&prompt_tokens=2000&burst_arrivals=20"
CHAT_LINK = f"{CHAT_H100}&prompt_tokens=2000&output_tokens=300"
L4_FP8 = f"{CHAT_L4}&weight_precision=fp8&kv_precision=fp8"
EIGHT_B_ON_24 = "estimate=serving&gpu_memory_gb=24&model=llama-3.1-8b&overhead_gb=3&context_tokens=8192&users=20"
PLANNING = "estimate=serving&gpu_memory_gb=24&model_gb=14&overhead_gb=3&kv_per_user_gb=0.6&users=20"
SLICE = "estimate=serving&gpu=h100-sxm:1g.20gb&model=llama-3.1-8b&users=4&context_tokens=4096"
SLICE_3G = "estimate=serving&gpu=h100-sxm:3g.40gb&model=llama-3.1-8b&users=4&context_tokens=4096"
SEVENTY_B_INT4 = "estimate=serving&gpu=h100-sxm&model=llama-3.1-70b&users=1&context_tokens=8192&weight_precision=int4"
SEVENTY_B_TP = "estimate=serving&gpu=h100-sxm&model=llama-3.1-70b&users=20&context_tokens=8192"
V5E = f"{CHAT}&gpu=tpu-v5e&tensor_parallel=4"
V6E = "estimate=serving&gpu=tpu-v6e&model=llama-3.1-8b&users=10&context_tokens=8192"
A100 = f"{CHAT}&gpu=a100-80gb"
L4_THREE = "estimate=serving&gpu=l4&model=llama-3.1-8b&users=3&context_tokens=8192"
EMBED_WINDOW = "estimate=batch&items=50000&window_hours=2&retry_margin=0.2&items_per_s=10"
# The 8B chat model's requests, priced on its row of the managed API (planner.capacity.api_prices).
API_DAY = (
    "estimate=batch&items=1000&window_hours=24&tokens_per_item=2000&output_tokens_per_item=300"
    "&model=llama-3.1-8b"
)
API_ONE = API_DAY.replace("items=1000&", "items=1000000&")
TRAIN = (
    "estimate=training&model=llama-3.1-8b&batch_size=4&seq_len=2048&checkpointing=true&steps=1000"
)
FULL, FULL_4 = f"{TRAIN}&method=full&gpu=h100-sxm", f"{TRAIN}&method=full&gpu=h100-sxm&gpus=4"
LORA, QLORA = f"{TRAIN}&method=lora&gpu=h100-sxm", f"{TRAIN}&method=qlora&gpu=h100-sxm"
QLORA_L4 = f"{TRAIN}&method=qlora&gpu=l4&fused_loss=true"

H100_DAY = catalogue("h100-sxm", "price_per_hour_usd", 24)
BREAK_EVEN = exercise(
    "api_break_even_requests_per_day", gpu="h100-sxm", prompt_tokens=2000, output_tokens=300
)
CHAT_PATHS = (
    "/planner/paths/?estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&users=20&context_tokens=8192"
    "&prompt_tokens=2000&output_tokens=300&ttft_target_ms=2000&requests_per_day=1000&peak_concurrency=20"
)
EMBED_PATHS = (
    "/planner/paths/?estimate=batch&items=50000&window_hours=2&model=bge-large-en-v1.5"
    "&tokens_per_item=400&output_tokens_per_item=0&retry_margin=0.2"
)
EMBED = "estimate=batch&items=50000&window_hours=2&model=bge-large-en-v1.5&tokens_per_item=400&output_tokens_per_item=0&retry_margin=0.2"
EMBED_T4, EMBED_CPU = f"{EMBED}&gpu=t4", f"{EMBED}&gpu=cpu-server"
TRAIN_PATHS = (
    "/planner/paths/?estimate=training&model=llama-3.1-8b&method=lora&batch_size=4&seq_len=2048"
    "&checkpointing=true&steps=1000"
)
# Lesson 8's three cards: the site's example cards (planner.cards.services.EXAMPLE_CARDS), each
# link as the cards page opens it (tests/courses/test_lesson_eight_links.py compares them).
CARD_CHAT = (
    "estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&weight_precision=bf16&kv_precision=bf16"
    "&users=20&context_tokens=8192&prompt_tokens=2000&output_tokens=300&ttft_target_ms=2000"
    "&max_num_seqs=20&requests_per_day=1000&peak_concurrency=20"
)
CARD_L4 = CARD_CHAT.replace("gpu=h100-sxm", "gpu=l4")
CARD_L4_FP8 = CARD_L4.replace(
    "weight_precision=bf16&kv_precision=bf16", "weight_precision=fp8&kv_precision=fp8"
)
CARD_EMBED = (
    "estimate=batch&items=50000&window_hours=2&gpu=t4&model=bge-large-en-v1.5"
    "&tokens_per_item=400&output_tokens_per_item=0&retry_margin=0.2"
)
CARD_TRAIN = (
    "estimate=training&model=llama-3.1-8b&method=lora&lora_rank=16&batch_size=4&seq_len=2048"
    "&checkpointing=true&gpu=h100-sxm&steps=1000"
)
CARD_CHAT_PATHS, CARD_EMBED_PATHS, CARD_TRAIN_PATHS = (
    f"/planner/paths/?{q}" for q in (CARD_CHAT, CARD_EMBED, CARD_TRAIN)
)
# Full fine-tuning of the same job: four GPUs at one sequence each train on LoRA's 4 a step.
FULL_SAME = f"{TRAIN}&method=full&gpu=h100-sxm&gpus=4".replace("batch_size=4", "batch_size=1")
# The catalogue's CPU server is one 96-core EPYC socket (speed_model.CPU_DENSE_BF16_TFLOPS).
CPU_CORES, WORKER_CORES = 96, 8


def worker_rate() -> float:
    return float(calculator(EMBED_CPU)["items_per_s_per_worker"]) / CPU_CORES * WORKER_CORES


def PATHS_BREAK_EVEN() -> float:
    return float(math.floor(comparison(CARD_CHAT_PATHS)["break_even_requests_per_day"]))


KV_20 = calc(CHAT_H100, "kv_cache_per_user_bytes", 20 / 10**9)

W1, W2, W3, W4, W5 = (
    "01-workload-types.md",
    "02-memory-consumers.md",
    "03-hardware-paths.md",
    "04-practical-estimate.md",
    "05-recall-capstone.md",
)
W6, W7, W8 = (
    "06-speed-from-the-spec-sheet.md",
    "07-cost-per-useful-result.md",
    "08-three-cards-sized.md",
)
Q2, Q3, Q4 = (
    "02-memory-consumers.quiz.toml",
    "03-hardware-paths.quiz.toml",
    "04-practical-estimate.quiz.toml",
)
Q1, Q5 = "01-workload-types.quiz.toml", "05-recall-capstone.quiz.toml"
Q6, Q7, Q8 = (
    "06-speed-from-the-spec-sheet.quiz.toml",
    "07-cost-per-useful-result.quiz.toml",
    "08-three-cards-sized.quiz.toml",
)

FIGURES: list[Figure] = [
    # 01: the cards in numbers
    Figure(W1, "each user's KV cache is {} GB", calc(CHAT_L4, "kv_cache_per_user_gb"), ".2f"),
    Figure(W1, "the 20\nusers hold {} GB of cache", KV_20, ".2f"),
    Figure(W1, "on top of {} GB of weights", calc(CHAT_L4, "weights_gb"), ".2f"),
    Figure(W1, "ask for {} chunks per second", calc(EMBED_WINDOW, "required_items_per_s"), ".4f"),
    Figure(Q1, "expected_value = {}", calc(CHAT_L4, "max_active_users"), "d", after='key = "chat-card-l4-users-fit"'),
    Figure(Q1, "leaving {} GB for the KV cache: {} users", calc(CHAT_L4, "available_for_cache_gb"), ".2f", after='key = "chat-card-l4-users-fit"'),
    Figure(Q1, "leaving {} GB for the KV cache: {} users", calc(CHAT_L4, "max_active_users"), "d", which=1, after='key = "chat-card-l4-users-fit"'),
    # 02: the worked fit on an L4, and the 70B at 4 bits
    Figure(W2, "2 bytes = {} GB", calc(CHAT_L4, "weights_gb"), ".2f"),
    Figure(W2, "comes to {} GB", calc(CHAT_L4, "overhead_gb"), ".2f"),
    Figure(W2, "what is left, {} GB, holds {} users at {} GB each", calc(CHAT_L4, "available_for_cache_gb"), ".2f"),
    Figure(W2, "what is left, {} GB, holds {} users at {} GB each", calc(CHAT_L4, "max_active_users"), "d", which=1),
    Figure(W2, "what is left, {} GB, holds {} users at {} GB each", calc(CHAT_L4, "kv_cache_per_user_gb"), ".2f", which=2),
    Figure(W2, "Twenty users were promised; {} fit", calc(CHAT_L4, "max_active_users"), "d"),
    Figure(W2, "weights to fp8 ({} GB", calc(L4_FP8, "weights_gb"), ".2f"),
    Figure(W2, "raises it to {} users", calc(L4_FP8, "max_active_users"), "d"),
    Figure(W2, "fall from {} to {}.", calc(L4_FP8, "max_active_users"), "d"),
    Figure(W2, "fall from {} to {}.", calc(CHAT_L4, "max_active_users"), "d", which=1),
    Figure(Q2, "counts {} GB of weights", calc(SEVENTY_B_INT4, "weights_gb"), ".2f"),
    Figure(Q2, "room for {} users at 8k", calc(SEVENTY_B_INT4, "max_active_users"), "d"),
    Figure(Q2, "expected_value = {}", calc(L4_FP8, "max_active_users"), "d", after='key = "fp8-l4-users-fit"'),
    Figure(Q2, "fp8 weights take {} GB", calc(L4_FP8, "weights_gb"), ".2f"),
    Figure(Q2, "each user's {} GB", calc(CHAT_L4, "kv_cache_per_user_gb"), ".2f"),
    Figure(Q2, "so {} GB of cache holds {} users", calc(L4_FP8, "available_for_cache_gb"), ".2f"),
    Figure(Q2, "so {} GB of cache holds {} users", calc(L4_FP8, "max_active_users"), "d", which=1),
    # 03: TPU and A100 prices, the MIG worked fit
    Figure(W3, "v5e chip-hour (${}) is", catalogue("tpu-v5e", "price_per_hour_usd"), ".2f"),
    Figure(W3, "cheaper than its A100's (${})", catalogue("a100-40gb", "price_per_hour_usd"), ".2f"),
    Figure(W3, "At bf16 the weights are {} GB", calc(SLICE, "weights_gb"), ".2f"),
    Figure(W3, "the slice keeps {} GB for the KV cache: {} users at {} GB each", calc(SLICE, "available_for_cache_gb"), ".2f"),
    Figure(W3, "the slice keeps {} GB for the KV cache: {} users at {} GB each", calc(SLICE, "max_active_users"), "d", which=1),
    Figure(W3, "the slice keeps {} GB for the KV cache: {} users at {} GB each", calc(SLICE, "kv_cache_per_user_gb"), ".2f", which=2),
    Figure(W3, "weights ({} GB; the KV cache stays bf16) it keeps {} GB, room for {} users", calc(SLICE + "&weight_precision=fp8", "weights_gb"), ".2f"),
    Figure(W3, "weights ({} GB; the KV cache stays bf16) it keeps {} GB, room for {} users", calc(SLICE + "&weight_precision=fp8", "available_for_cache_gb"), ".2f", which=1),
    Figure(W3, "weights ({} GB; the KV cache stays bf16) it keeps {} GB, room for {} users", calc(SLICE + "&weight_precision=fp8", "max_active_users"), "d", which=2),
    Figure(W3, "slice holds {} users at\nbf16", calc(SLICE_3G, "max_active_users"), "d"),
    Figure(Q3, "expected_value = {}", calc(SLICE, "max_active_users"), "d", after='key = "mig-slice-users-bf16"'),
    Figure(Q3, "hold the {} GB of weights and the engine's overhead, leaving \\\n{} GB: {} users at {} GB each", calc(SLICE, "weights_gb"), ".2f"),
    Figure(Q3, "hold the {} GB of weights and the engine's overhead, leaving \\\n{} GB: {} users at {} GB each", calc(SLICE, "available_for_cache_gb"), ".2f", which=1),
    Figure(Q3, "hold the {} GB of weights and the engine's overhead, leaving \\\n{} GB: {} users at {} GB each", calc(SLICE, "max_active_users"), "d", which=2),
    Figure(Q3, "hold the {} GB of weights and the engine's overhead, leaving \\\n{} GB: {} users at {} GB each", calc(SLICE, "kv_cache_per_user_gb"), ".2f", which=3),
    Figure(Q3, "fp8 weights free enough for {}.", calc(SLICE + "&weight_precision=fp8", "max_active_users"), "d"),
    # 04: the 8B on the planning function's GPU, the memory-bound H100
    Figure(W4, "tokens =\n{} GB per user", calc(CHAT_H100, "kv_cache_per_user_gb"), ".2f"),
    Figure(W4, "keeps {} GB for the cache and holds only\n{} such users", calc(EIGHT_B_ON_24, "available_for_cache_gb"), ".2f"),
    Figure(W4, "keeps {} GB for the cache and holds only\n{} such users", calc(EIGHT_B_ON_24, "max_active_users"), "d", which=1),
    Figure(W4, "share its {} GB/s", catalogue("h100-sxm", "memory_bandwidth_gb_s"), ",.0f"),
    Figure(W4, "each step reads {} GB of weights", calc(CHAT_H100, "weights_gb"), ".2f"),
    Figure(W4, "plus 20 × {} GB of caches", calc(CHAT_H100, "kv_cache_per_user_gb"), ".2f"),
    Figure(W4, "each user gets at most {} tokens/s", calc(CHAT_H100, "decode_tokens_per_s_upper_bound"), ".2f"),
    Figure(W4, "H100 PCIe has about {} GB/s", catalogue("h100-pcie", "memory_bandwidth_gb_s"), ",.0f"),
    Figure(Q4, "expected_value = {}", calc(CHAT_H100, "kv_cache_per_user_bytes", 1 / 10**9), ".3f", after='key = "kv-cache-from-architecture"'),
    # 05: the scored plan
    Figure(W5, "Weights {} GB; {} GB of KV cache per user", calc(CHAT_LINK, "weights_gb"), ".2f"),
    Figure(W5, "Weights {} GB; {} GB of KV cache per user", calc(CHAT_LINK, "kv_cache_per_user_gb"), ".2f", which=1),
    Figure(W5, "H100 SXM keeps {} GB for the cache, room for {} users", calc(CHAT_LINK, "available_for_cache_gb"), ".2f"),
    Figure(W5, "H100 SXM keeps {} GB for the cache, room for {} users", calc(CHAT_LINK, "max_active_users"), "d", which=1),
    Figure(W5, "leaves a margin of\n> {}.", calc(CHAT_LINK, "headroom_users"), "d"),
    Figure(W5, "2,000-token prompt: {} ms", calc(CHAT_LINK, "time_to_first_token_ms"), ".1f"),
    Figure(W5, "decode at 20 streams: {} tokens/s per\n> stream", calc(CHAT_LINK, "decode_tokens_per_s"), ".2f"),
    Figure(W5, "An L4 was rejected: {} users fit", calc(CHAT_L4, "max_active_users"), "d"),
    Figure(W5, "managed API costs ${} a day", calc(API_DAY, "api_cost_usd"), ".2f"),
    Figure(W5, "the H100 costs ${} a day", H100_DAY, ".0f"),
    Figure(W5, "Break-even is about {}\n> requests a day", BREAK_EVEN, ",.0f"),
    Figure(W5, "busy about {} % of the day", lambda: (1000 * 300 / calculator(CHAT_LINK)["aggregate_tokens_per_s"] + 1000 * calculator(CHAT_LINK)["time_to_first_token_ms"] / 1000) / 86400 * 100, ".2f"),
    Figure(W5, "meets the card ({} × NVIDIA T4)", lambda: float(comparison(CHAT_PATHS)["runner_up"]["count"]), ".0f"),
    Figure(W5, 'Quoting only "${} an hour"', catalogue("h100-sxm", "price_per_hour_usd"), ".2f"),
    Figure(Q5, "expected_value = {}", calc(CHAT_LINK, "headroom_users"), "d", after='key = "capstone-peak-margin"'),
    Figure(Q5, "room for {} users' KV caches", calc(CHAT_LINK, "max_active_users"), "d"),
    Figure(Q5, "so \\\n{} users of headroom", calc(CHAT_LINK, "headroom_users"), "d"),
    Figure(Q5, "One H100 at ${} an hour, ${} per million", catalogue("h100-sxm", "price_per_hour_usd"), ".2f"),
    Figure(Q5, "One H100 at ${} an hour, ${} per million", calc(CHAT_H100, "cost_per_million_output_tokens_usd"), ".2f", which=1),
    # 06: speed from the spec sheet
    Figure(W6, "counts {} GB of weights", calc(ONE_H100, "weights_gb"), ".2f"),
    Figure(W6, "context holds {} GB of KV cache", calc(ONE_H100, "kv_cache_per_user_gb"), ".2f"),
    Figure(W6, "reads about {} GB per token", lambda: calculator(ONE_H100)["weights_gb"] + calculator(ONE_H100)["kv_cache_per_user_gb"], ".0f"),
    Figure(W6, "about {} GB per step", lambda: calculator(CHAT_H100)["weights_gb"] + KV_20(), ".0f"),
    Figure(W6, "takes {} % for a GPU streaming 16-bit", speed_constant("BANDWIDTH_EFFICIENCY", ("gpu", "16-bit"), 100), ".0f"),
    Figure(W6, "the model charges {} ms per step", speed_constant("DECODE_STEP_FIXED_S", None, 1000), ".1f"),
    *(
        Figure(W6, f"| {name} | {{}} GB/s | {{}} tokens/s | {{}} tokens/s | {{}} tokens/s | {{}} tokens/s | {{}} tokens/s |", value, fmt, which=which)
        for name, gpu, one, chat in (
            ("NVIDIA L4", "l4", ONE_L4, CHAT_L4),
            ("NVIDIA A10G", "a10g", ONE_A10G, CHAT_A10G),
            ("NVIDIA H100 SXM", "h100-sxm", ONE_H100, CHAT_H100),
        )
        for which, value, fmt in (
            (0, catalogue(gpu, "memory_bandwidth_gb_s"), ",.0f"),
            (1, calc(one, "decode_tokens_per_s_upper_bound"), ".2f"),
            (2, calc(one, "decode_tokens_per_s"), ".2f"),
            (3, calc(chat, "decode_tokens_per_s_upper_bound"), ".2f"),
            (4, calc(chat, "decode_tokens_per_s"), ".2f"),
            (5, calc(chat, "aggregate_tokens_per_s"), ",.1f"),
        )
    ),
    Figure(W6, "has about {} times\nthe L4's bandwidth and decodes about {} times", ratio(catalogue("h100-sxm", "memory_bandwidth_gb_s"), catalogue("l4", "memory_bandwidth_gb_s")), ".0f"),
    Figure(W6, "has about {} times\nthe L4's bandwidth and decodes about {} times", ratio(calc(ONE_H100, "decode_tokens_per_s"), calc(ONE_L4, "decode_tokens_per_s")), ".0f", which=1),
    Figure(W6, "hold the KV cache of {} such streams", calc(CHAT_L4, "max_active_users"), "d"),
    Figure(W6, "is {} tokens/s on an H100, {} tokens/s on an L4 and {} tokens/s", calc(CHAT_H100, "compute_ceiling_tokens_per_s"), ",.0f"),
    Figure(W6, "is {} tokens/s on an H100, {} tokens/s on an L4 and {} tokens/s", calc(CHAT_L4, "compute_ceiling_tokens_per_s"), ",.0f", which=1),
    Figure(W6, "is {} tokens/s on an H100, {} tokens/s on an L4 and {} tokens/s", calc(CHAT_A10G, "compute_ceiling_tokens_per_s"), ",.0f", which=2),
    Figure(W6, "reaches {} % of\nthe dense 16-bit peak", speed_constant("ACHIEVED_MFU", ("gpu", "16-bit"), 100), ".0f"),
    Figure(W6, "charges {} ms of fixed cost per\nrequest", speed_constant("FIRST_TOKEN_FIXED_S", None, 1000), ".0f"),
    Figure(W6, "TFLOPS): {} ms to the first token", calc(ONE_L4 + PROMPT, "time_to_first_token_ms"), ",.1f"),
    Figure(W6, "publishes no A10G datasheet, and AWS lists none): {} ms;", calc(ONE_A10G + PROMPT, "time_to_first_token_ms"), ",.1f"),
    Figure(W6, "- H100 SXM (989 TFLOPS): {} ms.", calc(ONE_H100 + PROMPT, "time_to_first_token_ms"), ",.1f"),
    Figure(W6, "comes after {} ms on an L4, {} ms on an A10G and {} ms on an\nH100", calc(CHAT_L4 + BURST, "time_to_first_token_ms"), ",.1f"),
    Figure(W6, "comes after {} ms on an L4, {} ms on an A10G and {} ms on an\nH100", calc(CHAT_A10G + BURST, "time_to_first_token_ms"), ",.1f", which=1),
    Figure(W6, "comes after {} ms on an L4, {} ms on an A10G and {} ms on an\nH100", calc(CHAT_H100 + BURST, "time_to_first_token_ms"), ",.1f", which=2),
    Figure(W6, "H100s give each stream {} tokens/s against {} on one", calc(CHAT_H100_TP2, "decode_tokens_per_s_upper_bound"), ".2f"),
    Figure(W6, "H100s give each stream {} tokens/s against {} on one", calc(CHAT_H100, "decode_tokens_per_s_upper_bound"), ".2f", which=1),
    Figure(W6, "prediction gives {} tokens/s against {}: a gain of {} times", calc(CHAT_H100_TP2, "decode_tokens_per_s"), ".2f"),
    Figure(W6, "prediction gives {} tokens/s against {}: a gain of {} times", calc(CHAT_H100, "decode_tokens_per_s"), ".2f", which=1),
    Figure(W6, "prediction gives {} tokens/s against {}: a gain of {} times", ratio(calc(CHAT_H100_TP2, "decode_tokens_per_s"), calc(CHAT_H100, "decode_tokens_per_s")), ".2f", which=2),
    Figure(Q6, "expected_value = {}", calc(CHAT_LINK, "decode_tokens_per_s"), ".2f", after='key = "chat-card-h100-decode-rate"'),
    Figure(Q6, "reads the {} GB of weights once", calc(CHAT_LINK, "weights_gb"), ".2f"),
    Figure(Q6, "share of the \\\n{} GB/s", catalogue("h100-sxm", "memory_bandwidth_gb_s"), ",.0f"),
    Figure(W6, "each\nstream decodes at {} tokens/s; if 2 new requests", calc(CHAT_LINK, "decode_tokens_per_s"), ".2f"),
    Figure(W6, "each stream falls to {} tokens/s", calc(CHAT_LINK + "&arrival_rate_per_s=2", "decode_tokens_per_s"), ".2f"),
    Figure(W6, "up to the {} users whose caches fit", calc(CHAT_H100, "max_active_users"), "d"),
    Figure(Q6, "({} ms against \\\n{} ms for the 8B model)", calc(ONE_L4 + PROMPT, "time_to_first_token_ms"), ",.1f"),
    Figure(Q6, "({} ms against \\\n{} ms for the 8B model)", calc(ONE_A10G + PROMPT, "time_to_first_token_ms"), ",.1f", which=1),
    # 07: cost per useful result
    Figure(W7, "one H100 SXM at ${} an hour, {} tokens/s for all 20 streams: **${} per million", catalogue("h100-sxm", "price_per_hour_usd"), ".2f"),
    Figure(W7, "one H100 SXM at ${} an hour, {} tokens/s for all 20 streams: **${} per million", calc(CHAT_H100, "aggregate_tokens_per_s"), ",.1f", which=1),
    Figure(W7, "one H100 SXM at ${} an hour, {} tokens/s for all 20 streams: **${} per million", calc(CHAT_H100, "cost_per_million_output_tokens_usd"), ".2f", which=2),
    Figure(W7, "one A100 80GB at ${} an hour, {} tokens/s: **${} per million", catalogue("a100-80gb", "price_per_hour_usd"), ".2f"),
    Figure(W7, "one A100 80GB at ${} an hour, {} tokens/s: **${} per million", calc(A100, "aggregate_tokens_per_s"), ",.1f", which=1),
    Figure(W7, "one A100 80GB at ${} an hour, {} tokens/s: **${} per million", calc(A100, "cost_per_million_output_tokens_usd"), ".2f", which=2),
    Figure(W7, "one L4 at ${} an hour", catalogue("l4", "price_per_hour_usd"), ".2f"),
    Figure(W7, "holding the {} streams that fit at bf16 ({} tokens/s): **${} per\nmillion", calc(CHAT_L4, "max_active_users"), "d"),
    Figure(W7, "holding the {} streams that fit at bf16 ({} tokens/s): **${} per\nmillion", calc(L4_THREE, "aggregate_tokens_per_s"), ",.1f", which=1),
    Figure(W7, "holding the {} streams that fit at bf16 ({} tokens/s): **${} per\nmillion", calc(L4_THREE, "cost_per_million_output_tokens_usd"), ".2f", which=2),
    Figure(W7, "the H100 costs\n${} for the day", H100_DAY, ".0f"),
    Figure(W7, "That is **${} per million output tokens**", lambda: H100_DAY() / (1000 * 300 / 10**6), ",.0f"),
    Figure(W7, "busy the H100's ${} becomes ${} per million", calc(CHAT_H100, "cost_per_million_output_tokens_usd"), ".2f"),
    Figure(W7, "busy the H100's ${} becomes ${} per million", calc(CHAT_H100, "cost_per_million_output_tokens_usd", 10), ".2f", which=1),
    Figure(W7, "8B model, costs ${} per million input\ntokens and ${} per million output tokens", catalogue("managed-api", "price_per_million_input_tokens_usd"), ".2f"),
    Figure(W7, "8B model, costs ${} per million input\ntokens and ${} per million output tokens", catalogue("managed-api", "price_per_million_output_tokens_usd"), ".2f", which=1),
    Figure(W7, "such as Llama 3.1 70B, costs\n${} for each", catalogue("managed-api-80b", "price_per_million_input_tokens_usd"), ".2f"),
    Figure(W7, "a 300-token answer costs ${}, and 1,000 of them a day cost\n${}", calc(API_ONE, "api_cost_usd", 1 / 10**6), ".5f"),
    Figure(W7, "a 300-token answer costs ${}, and 1,000 of them a day cost\n${}", calc(API_DAY, "api_cost_usd"), ".2f", which=1),
    Figure(W7, "than the ${} a day of an H100", H100_DAY, ".0f"),
    Figure(W7, "these requests it is about {}\nrequests a day", BREAK_EVEN, ",.0f"),
    Figure(W7, "chip\ncosts ${} an hour, less than the A100 40GB's ${}", catalogue("tpu-v5e", "price_per_hour_usd"), ".2f"),
    Figure(W7, "chip\ncosts ${} an hour, less than the A100 40GB's ${}", catalogue("a100-40gb", "price_per_hour_usd"), ".2f", which=1),
    Figure(W7, "four v5e chips (${} an hour)", catalogue("tpu-v5e", "price_per_hour_usd", 4), ".2f"),
    Figure(W7, "at about\n${} per million output tokens, against ${} on one H100", calc(V5E, "cost_per_million_output_tokens_usd"), ".2f"),
    Figure(W7, "at about\n${} per million output tokens, against ${} on one H100", calc(CHAT_H100, "cost_per_million_output_tokens_usd"), ".2f", which=1),
    Figure(W7, "${} an hour) holds {} such streams at ${} per million", catalogue("tpu-v6e", "price_per_hour_usd"), ".2f"),
    Figure(W7, "${} an hour) holds {} such streams at ${} per million", calc(V6E, "max_active_users"), "d", which=1),
    Figure(W7, "${} an hour) holds {} such streams at ${} per million", calc(V6E, "cost_per_million_output_tokens_usd"), ".2f", which=2),
    Figure(W7, "two chips hold the 8B model but the\ncaches of only {} users", calc(V5E.replace("tensor_parallel=4", "tensor_parallel=2"), "max_active_users"), "d"),
    Figure(W7, "planned as {} items of work", calc(EMBED_WINDOW, "work_items"), ",d"),
    Figure(Q7, "expected_value = {}", calc(V5E, "cost_per_million_output_tokens_usd"), ".2f", after='key = "tpu-v5e-cost-per-million"'),
    Figure(Q7, "Four chips at ${} an hour are ${} an hour", catalogue("tpu-v5e", "price_per_hour_usd"), ".2f"),
    Figure(Q7, "Four chips at ${} an hour are ${} an hour", catalogue("tpu-v5e", "price_per_hour_usd", 4), ".2f", which=1),
    # 08: the three cards sized
    Figure(W8, "The weights are {} GB", calc(CHAT_LINK, "weights_gb"), ".2f"),
    Figure(W8, "context holds {} GB of KV cache\n({} bytes per token", calc(CHAT_LINK, "kv_cache_per_user_gb"), ".2f"),
    Figure(W8, "context holds {} GB of KV cache\n({} bytes per token", calc(CHAT_LINK, "kv_bytes_per_token"), ",d", which=1),
    Figure(W8, "20 users\nneed {} GB of cache", KV_20, ".2f"),
    Figure(W8, "keeps {} GB for the cache: room for {} users, not 20", calc(CARD_L4, "available_for_cache_gb"), ".2f"),
    Figure(W8, "keeps {} GB for the cache: room for {} users, not 20", calc(CARD_L4, "max_active_users"), "d", which=1),
    Figure(W8, "fp8 KV cache keeps {} GB: {} users", calc(CARD_L4_FP8, "available_for_cache_gb"), ".2f"),
    Figure(W8, "fp8 KV cache keeps {} GB: {} users", calc(CARD_L4_FP8, "max_active_users"), "d", which=1),
    Figure(W8, "**H100 SXM** keeps {} GB: room for {} users", calc(CARD_CHAT, "available_for_cache_gb"), ".2f"),
    Figure(W8, "**H100 SXM** keeps {} GB: room for {} users", calc(CARD_CHAT, "max_active_users"), "d", which=1),
    Figure(W8, "(Lesson 2 counted {} users on the L4", calc(CHAT_L4, "max_active_users"), "d"),
    Figure(W8, "first token in {} ms, far inside", calc(CARD_CHAT, "time_to_first_token_ms"), ",.1f"),
    Figure(W8, "waits {} ms for the last one", calc(CARD_CHAT + "&burst_arrivals=20", "time_to_first_token_ms"), ",.1f"),
    Figure(W8, "the calculator predicts {} tokens/s per stream at 20 streams", calc(CARD_CHAT, "decode_tokens_per_s"), ".2f"),
    Figure(W8, "H100 costs ${} per million output tokens", calc(CARD_CHAT, "cost_per_million_output_tokens_usd"), ".2f"),
    Figure(W8, "still costs\n${} a day", H100_DAY, ".0f"),
    Figure(W8, "managed API's bill is ${}", calc(API_DAY, "api_cost_usd"), ".2f"),
    Figure(W8, "previous lesson: {} requests a day", BREAK_EVEN, ",.0f"),
    Figure(W8, "about {} × 10¹⁶ FLOPs: {} PFLOP", lambda: encoder_flops() / 10**16, ".2f"),
    Figure(W8, "about {} × 10¹⁶ FLOPs: {} PFLOP", lambda: encoder_flops() / 10**15, ".1f", which=1),
    Figure(W8, "the job is {} items of work", calc(EMBED_WINDOW, "work_items"), ",d"),
    Figure(W8, "window asks for\n{} chunks per second", calc(EMBED_WINDOW, "required_items_per_s"), ".4f"),
    Figure(W8, "embeds about {} chunks per second, an assumption: {} % of", calc(CARD_EMBED, "items_per_s_per_worker"), ".1f"),
    Figure(W8, "embeds about {} chunks per second, an assumption: {} % of", speed_constant("ACHIEVED_MFU", ("gpu", "16-bit"), 100), ".0f", which=1),
    Figure(W8, "a whole socket: {} chunks per second per core", lambda: float(calculator(EMBED_CPU)["items_per_s_per_worker"]) / CPU_CORES, ".3f"),
    Figure(W8, "manages about {} chunks per second and needs about {} hours", worker_rate, ".2f"),
    Figure(W8, "manages about {} chunks per second and needs about {} hours", lambda: calculator(EMBED_WINDOW)["work_items"] / worker_rate() / 3600, ".1f", which=1),
    Figure(W8, "work in {} hours, a few minutes", calc(EMBED_T4, "hours_needed"), ".4f"),
    Figure(W8, "counts {} TFLOPS of AVX-512 BF16 at an assumed {} %", speed_constant("CPU_DENSE_BF16_TFLOPS"), ".1f"),
    Figure(W8, "counts {} TFLOPS of AVX-512 BF16 at an assumed {} %", speed_constant("ACHIEVED_MFU", ("cpu", "16-bit"), 100), ".0f", which=1),
    Figure(W8, "embeds about {} chunks per second: it needs {} hours", calc(EMBED_CPU, "items_per_s_per_worker"), ".1f"),
    Figure(W8, "embeds about {} chunks per second: it needs {} hours", calc(EMBED_CPU, "hours_needed"), ".2f", which=1),
    Figure(W8, "On a T4 at ${} an hour that is ${} a night; on the CPU server at ${} an hour,\n${}.", catalogue("t4", "price_per_hour_usd"), ".2f"),
    Figure(W8, "On a T4 at ${} an hour that is ${} a night; on the CPU server at ${} an hour,\n${}.", calc(EMBED_T4, "cost_usd"), ".2f", which=1),
    Figure(W8, "On a T4 at ${} an hour that is ${} a night; on the CPU server at ${} an hour,\n${}.", catalogue("cpu-server", "price_per_hour_usd"), ".2f", which=2),
    Figure(W8, "On a T4 at ${} an hour that is ${} a night; on the CPU server at ${} an hour,\n${}.", calc(EMBED_CPU, "cost_usd"), ".2f", which=3),
    Figure(W8, "API (at ${} per million tokens) costs ${}", catalogue("managed-api", "price_per_million_embedding_tokens_usd"), ".2f"),
    Figure(W8, "API (at ${} per million tokens) costs ${}", calc(EMBED_T4, "api_cost_usd"), ".2f", which=1),
    Figure(W8, "{} GB of weights,\n  {} GB of gradients and {} GB of optimizer state", calc(FULL, "weights_gb"), ".2f"),
    Figure(W8, "{} GB of weights,\n  {} GB of gradients and {} GB of optimizer state", calc(FULL, "gradients_gb"), ".2f", which=1),
    Figure(W8, "{} GB of weights,\n  {} GB of gradients and {} GB of optimizer state", calc(FULL, "optimizer_state_gb"), ".2f", which=2),
    Figure(W8, "plus activations: {} GB", calc(FULL, "total_gb"), ".2f"),
    Figure(W8, "each GPU needs {} GB", calc(FULL_SAME, "total_gb"), ".2f"),
    Figure(W8, "beside them: {}\n  trainable parameters", calc(CARD_TRAIN, "trainable_params"), ",d"),
    Figure(W8, "The total is\n  {} GB: one H100", calc(CARD_TRAIN, "total_gb"), ".2f"),
    Figure(W8, "in 4 bits: {} GB of weights, {} GB in all", calc(QLORA, "weights_gb"), ".2f"),
    Figure(W8, "in 4 bits: {} GB of weights, {} GB in all", calc(QLORA, "total_gb"), ".2f", which=1),
    Figure(W8, "the run needs\n  {} GB: it fits", calc(QLORA_L4, "total_gb"), ".2f"),
    Figure(W8, "runs the 1,000 steps in\n{} hours for ${}", calc(CARD_TRAIN, "hours_per_run"), ".3f"),
    Figure(W8, "runs the 1,000 steps in\n{} hours for ${}", calc(CARD_TRAIN, "cost_per_run_usd"), ".2f", which=1),
    Figure(W8, "step still trains on 4 sequences) takes {} hours for ${}: about {} times", calc(FULL_SAME, "hours_per_run"), ".3f"),
    Figure(W8, "step still trains on 4 sequences) takes {} hours for ${}: about {} times", calc(FULL_SAME, "cost_per_run_usd"), ".2f", which=1),
    Figure(W8, "step still trains on 4 sequences) takes {} hours for ${}: about {} times", ratio(calc(FULL_SAME, "cost_per_run_usd"), calc(CARD_TRAIN, "cost_per_run_usd")), ".2f", which=2),
    Figure(W8, "L4 takes {} hours for ${}", calc(QLORA_L4, "hours_per_run"), ".3f"),
    Figure(W8, "L4 takes {} hours for ${}", calc(QLORA_L4, "cost_per_run_usd"), ".2f", which=1),
    Figure(W8, "| {} GB weights + {} GB per user | {} ms to the first token, {} tokens/s per stream (H100) | ${} a day", calc(CHAT_LINK, "weights_gb"), ".2f"),
    Figure(W8, "| {} GB weights + {} GB per user | {} ms to the first token, {} tokens/s per stream (H100) | ${} a day", calc(CHAT_LINK, "kv_cache_per_user_gb"), ".2f", which=1),
    Figure(W8, "| {} GB weights + {} GB per user | {} ms to the first token, {} tokens/s per stream (H100) | ${} a day", calc(CHAT_LINK, "time_to_first_token_ms"), ",.1f", which=2),
    Figure(W8, "| {} GB weights + {} GB per user | {} ms to the first token, {} tokens/s per stream (H100) | ${} a day", calc(CARD_CHAT, "decode_tokens_per_s"), ".2f", which=3),
    Figure(W8, "| {} GB weights + {} GB per user | {} ms to the first token, {} tokens/s per stream (H100) | ${} a day", calc(API_DAY, "api_cost_usd"), ".2f", which=4),
    Figure(W8, "| {} h on a whole CPU server, {} h on one T4 | ${} on the CPU, ${} on a T4, ${} on the API |", calc(EMBED_CPU, "hours_needed"), ".2f"),
    Figure(W8, "| {} h on a whole CPU server, {} h on one T4 | ${} on the CPU, ${} on a T4, ${} on the API |", calc(EMBED_T4, "hours_needed"), ".4f", which=1),
    Figure(W8, "| {} h on a whole CPU server, {} h on one T4 | ${} on the CPU, ${} on a T4, ${} on the API |", calc(EMBED_CPU, "cost_usd"), ".2f", which=2),
    Figure(W8, "| {} h on a whole CPU server, {} h on one T4 | ${} on the CPU, ${} on a T4, ${} on the API |", calc(EMBED_T4, "cost_usd"), ".2f", which=3),
    Figure(W8, "| {} h on a whole CPU server, {} h on one T4 | ${} on the CPU, ${} on a T4, ${} on the API |", calc(EMBED_T4, "api_cost_usd"), ".2f", which=4),
    Figure(Q8, "expected_value = {}", calc(CARD_TRAIN, "cost_per_run_usd"), ".2f", after='key = "lora-run-cost"'),
    Figure(Q8, "times ${} \\\nan hour", catalogue("h100-sxm", "price_per_hour_usd"), ".2f"),
    # The comparison of paths
    Figure(W7, "it recommends the managed API at ${} a day", option(CARD_CHAT_PATHS, "managed-api", "cost_usd"), ".2f"),
    Figure(W7, "is 4 × NVIDIA T4 at ${} a day", option(CARD_CHAT_PATHS, "t4", "cost_usd", 4), ".2f"),
    Figure(W7, "for it is about {} requests a day", PATHS_BREAK_EVEN, ",.0f"),
    Figure(W8, "its first token comes after {} ms", option(CARD_CHAT_PATHS, "cpu-server", "time_to_first_token_ms"), ",.0f"),
    Figure(W8, "(4 × NVIDIA T4 at ${} a day)", option(CARD_CHAT_PATHS, "t4", "cost_usd", 4), ".2f"),
    Figure(W8, "and {} for the cheapest self-hosted path", lambda: float(math.floor(comparison(CARD_CHAT_PATHS)["break_even_requests_per_day"])), ",.0f"),
    Figure(W8, "model), which matters for a job this short: ${} on the T4, ${} on the CPU server", option(CARD_EMBED_PATHS, "t4", "cost_usd"), ".2f"),
    Figure(W8, "model), which matters for a job this short: ${} on the T4, ${} on the CPU server", option(CARD_EMBED_PATHS, "cpu-server", "cost_usd"), ".2f", which=1),
    Figure(W8, "one NVIDIA GH200\nat ${}: as fast as the H100 SXM ({} hours)", option(CARD_TRAIN_PATHS, "gh200", "cost_usd"), ".2f"),
    Figure(W8, "one NVIDIA GH200\nat ${}: as fast as the H100 SXM ({} hours)", option(CARD_TRAIN_PATHS, "gh200", "hours_per_run"), ".2f", which=1),
    Figure(W8, "lower price by the hour\n(${}, a price", catalogue("gh200", "price_per_hour_usd"), ".2f"),
    Figure(W8, "| {} GB with LoRA | {} h per 1,000 steps (GH200) | ${} per run |", calc(CARD_TRAIN, "total_gb"), ".2f"),
    Figure(W8, "| {} GB with LoRA | {} h per 1,000 steps (GH200) | ${} per run |", option(CARD_TRAIN_PATHS, "gh200", "hours_per_run"), ".2f", which=1),
    Figure(W8, "| {} GB with LoRA | {} h per 1,000 steps (GH200) | ${} per run |", option(CARD_TRAIN_PATHS, "gh200", "cost_usd"), ".2f", which=2),
    Figure(Q8, "about {} × parameters FLOPs (the forward pass", lambda: calculator(LORA)["flops_per_token"] / calculator(LORA)["params"], ".0f"),
    Figure(Q8, "run at the assumed {} % MFU", training_mfu, ".0f"),
    Figure(W8, "At the calculator's assumed {} % MFU", training_mfu, ".0f"),
    Figure(Q4, "expected_value = {}", calc(PLANNING, "max_active_users"), "d", after='key = "planning-function-max-users"'),
    Figure(Q4, "expected_value = {}", calc(PLANNING, "available_for_cache_gb"), ".0f", after='key = "planning-function-cache-gb"'),
    # Spec-sheet figures the lessons quote from the catalogue
    Figure(W6, "- L4 ({} dense bf16 TFLOPS)", catalogue("l4", "dense_bf16_tflops"), ".0f"),
    Figure(W6, "- A10G ({} TFLOPS, a figure from a third party", catalogue("a10g", "dense_bf16_tflops"), ".0f"),
    Figure(W6, "- H100 SXM ({} TFLOPS)", catalogue("h100-sxm", "dense_bf16_tflops"), ".0f"),
    Figure(W6, "because the {} GB of\nweights are read once", calc(CHAT_H100, "weights_gb"), ".0f"),
    Figure(W8, "a **T4** ({} dense 16-bit TFLOPS)", catalogue("t4", "dense_bf16_tflops"), ".0f"),
    Figure(W4, "H100 reports {} GiB", catalogue("h100-sxm", "usable_memory_gib"), ".1f"),
    # 04: the course source's planning function, run by the calculator's link
    Figure(W4, "'rough_max_active_users': {}}`", calc(PLANNING, "max_active_users"), "d"),
    Figure(W4, "24 − 14 − 3 leaves\n{} GB for the KV cache", calc(PLANNING, "available_for_cache_gb"), ".0f"),
    Figure(W7, "and the break-even\ntraffic for it is about {} requests a day. Read", PATHS_BREAK_EVEN, ",.0f"),
    Figure(W7, "Saving stretches the run to 8 × (1 + 2 ÷ 30) = {} hours", lambda: float(spot_run().running_hours), ".3f"),
    Figure(W7, "the provider interrupts it {} × 4 ÷ 24 = {} times", lambda: float(spot_run().running_hours), ".3f"),
    Figure(W7, "the provider interrupts it {} × 4 ÷ 24 = {} times", lambda: float(spot_run().interruptions), ".3f", which=1),
    Figure(W7, "so the run loses\n{} hours", lambda: float(spot_run().lost_hours), ".3f"),
    Figure(W7, "The expected bill is ({} + {}) × ${} = **${}**", lambda: float(spot_run().running_hours), ".3f"),
    Figure(W7, "The expected bill is ({} + {}) × ${} = **${}**", lambda: float(spot_run().lost_hours), ".3f", which=1),
    Figure(W7, "The expected bill is ({} + {}) × ${} = **${}**", lambda: 1.2, ".2f", which=2),
    Figure(W7, "The expected bill is ({} + {}) × ${} = **${}**", exercise("spot_training_cost_usd", **SPOT), ".2f", which=3),
    Figure(W7, "on-demand A100 40GB at ${} an hour cost ${} without", catalogue("a100-40gb", "price_per_hour_usd"), ".2f"),
    Figure(W7, "on-demand A100 40GB at ${} an hour cost ${} without", catalogue("a100-40gb", "price_per_hour_usd", 8), ".2f", which=1),
    Figure(W7, "(one every {} minutes), save about every\n{} minutes", lambda: 24 * 60 / 4, ".0f"),
    Figure(W7, "(one every {} minutes), save about every\n{} minutes", exercise("checkpoint_interval_minutes", checkpoint_save_minutes=2, interruptions_per_day=4), ".1f", which=1),
    # The four gaps, worked (issue 38): quantisation, the compute-bound batch, MoE, spot
    Figure(W2, "and LM head ({} billion\nparameters)", fact("quantised_weights_gb", "embedding_params_b", gpu="l4", model="llama-3.1-8b", precision="int4"), ".3f"),
    Figure(W2, "with its scales ({} bytes per weight)", fact("quantised_weights_gb", "quantised_bytes", gpu="l4", model="llama-3.1-8b", precision="int4"), ".4f"),
    Figure(W2, "so the weights are {} GB, and an L4", exercise("quantised_weights_gb", gpu="l4", model="llama-3.1-8b", precision="int4"), ".2f"),
    Figure(W2, "In fp8 they are {} GB: W8A8", exercise("quantised_weights_gb", gpu="a10g", model="llama-3.1-8b", precision="fp8"), ".2f"),
    Figure(W3, "`1g.10gb` gets {} of the card's {} streaming multiprocessors", mig_sms("h100-sxm", "1g.10gb"), ".0f"),
    Figure(W3, "`1g.10gb` gets {} of the card's {} streaming multiprocessors", mig_sms("h100-sxm", "all"), ".0f", which=1),
    Figure(W3, "`3g.40gb` gets\n{} SMs", mig_sms("h100-sxm", "3g.40gb"), ".0f"),
    Figure(W4, "attention adds {} % at an 8k prompt and {} % at 32k", attention_share(8192), ".0f"),
    Figure(W4, "attention adds {} % at an 8k prompt and {} % at 32k", attention_share(32768), ".0f", which=1),
    Figure(W6, "8B, {} % more at an 8k prompt and {} % at 32k", attention_share(8192), ".0f"),
    Figure(W6, "8B, {} % more at an 8k prompt and {} % at 32k", attention_share(32768), ".0f", which=1),
    Figure(W6, "an H100 SXM does {} dense bf16 TFLOPS and reads {} GB/s: {} FLOPs per byte", catalogue("h100-sxm", "dense_bf16_tflops"), ".0f"),
    Figure(W6, "an H100 SXM does {} dense bf16 TFLOPS and reads {} GB/s: {} FLOPs per byte", catalogue("h100-sxm", "memory_bandwidth_gb_s"), ",.0f", which=1),
    Figure(W6, "an H100 SXM does {} dense bf16 TFLOPS and reads {} GB/s: {} FLOPs per byte", ratio(catalogue("h100-sxm", "dense_bf16_tflops", 1000), catalogue("h100-sxm", "memory_bandwidth_gb_s")), ".1f", which=2),
    Figure(W6, "turns compute-bound from a\nbatch of {} streams; on an L4 ({} TFLOPS over {} GB/s) from {}", exercise("compute_bound_batch", gpu="h100-sxm", model="llama-3.1-8b"), "d"),
    Figure(W6, "turns compute-bound from a\nbatch of {} streams; on an L4 ({} TFLOPS over {} GB/s) from {}", catalogue("l4", "dense_bf16_tflops"), ".0f", which=1),
    Figure(W6, "turns compute-bound from a\nbatch of {} streams; on an L4 ({} TFLOPS over {} GB/s) from {}", catalogue("l4", "memory_bandwidth_gb_s"), ".0f", which=2),
    Figure(W6, "turns compute-bound from a\nbatch of {} streams; on an L4 ({} TFLOPS over {} GB/s) from {}", exercise("compute_bound_batch", gpu="l4", model="llama-3.1-8b"), "d", which=3),
    Figure(W6, "it comes at a batch of {} for 128 tokens of context per stream and {} for 256", calc("estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&users=1&context_tokens=128", "compute_bound_batch"), "d"),
    Figure(W6, "it comes at a batch of {} for 128 tokens of context per stream and {} for 256", calc("estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&users=1&context_tokens=256", "compute_bound_batch"), "d", which=1),
    Figure(W6, "Mixtral 8x7B has {} billion parameters in all but {} billion\nactive per token", model_figure("mixtral-8x7b", "params_b"), ".1f"),
    Figure(W6, "Mixtral 8x7B has {} billion parameters in all but {} billion\nactive per token", model_figure("mixtral-8x7b", "active_params_b"), ".1f", which=1),
    Figure(W6, "at bf16 the weights take {} GB", model_figure("mixtral-8x7b", "params_b", 2), ".1f"),
    Figure(W6, "reads only the\n  active {} billion parameters: {} GB a step", model_figure("mixtral-8x7b", "active_params_b"), ".1f"),
    Figure(W6, "reads only the\n  active {} billion parameters: {} GB a step", exercise("moe_weights_read_gb", model="mixtral-8x7b", users=1), ".1f", which=1),
    Figure(W6, "A batch of 8 reads {} GB", exercise("moe_weights_read_gb", model="mixtral-8x7b", users=8), ".2f"),
    Figure(W6, "touches all of them,\n  {} GB, the whole model", exercise("moe_weights_read_gb", model="mixtral-8x7b", users=64), ".2f"),
]  # fmt: skip

# Judgements the lessons state in words: the sentence must be there and the engine must agree.
Claim = tuple[str, str, Callable[[], bool]]


def fact_text(gpu: str, precision: str) -> str:
    from planner.capacity.exercises import solve_exercise

    return solve_exercise(
        "quantised_weights_gb", {"gpu": gpu, "model": "llama-3.1-8b", "precision": precision}
    ).facts["kernel"]


def burst_ms(query: str) -> float:
    return float(calculator(query + BURST)["time_to_first_token_ms"])


def aggregate_keeps_rising(query: str) -> bool:
    """No batch up to the pool's users turns decode compute-bound: the aggregate rate rises."""
    estimate = calculator(query)
    rates = [point["aggregate_tokens_per_s"] for point in estimate["speed_curve"]]
    rising = all(a < b for a, b in itertools.pairwise(rates))
    return estimate["compute_bound_batch"] is None and rising


def gap(one: str) -> float:
    return float(calculator(one)["decode_tokens_per_s_upper_bound"]) / float(
        calculator(one)["decode_tokens_per_s"]
    )


CLAIMS: list[Claim] = [
    (W7, "the TPUs cost more than the H100 and less than the L4", lambda: calculator(CHAT_H100)["cost_per_million_output_tokens_usd"] < min(calculator(V5E)["cost_per_million_output_tokens_usd"], calculator(V6E)["cost_per_million_output_tokens_usd"]) and max(calculator(V5E)["cost_per_million_output_tokens_usd"], calculator(V6E)["cost_per_million_output_tokens_usd"]) < calculator(L4_THREE)["cost_per_million_output_tokens_usd"]),
    (W6, "and at\nthe chat card's 8,192 tokens never", lambda: calculator(CHAT_H100)["compute_bound_batch"] is None),
    (W6, "more than one 80 GB GPU", lambda: 2 * 46.7 > 80 and not calculator("estimate=serving&gpu=h100-sxm&model=mixtral-8x7b&users=1&context_tokens=1024")["fits"]),
    (W2, "W8A8 on the L4, but weight-only W8A16 on an A10G", lambda: fact_text("l4", "fp8") == "W8A8" and fact_text("a10g", "fp8") == "W8A16"),
    (W6, "a 70B model\nat bf16 with the chat card's 20 users at 8k needs four 80 GB GPUs", lambda: not calculator(SEVENTY_B_TP + "&tensor_parallel=2")["fits"] and calculator(SEVENTY_B_TP + "&tensor_parallel=4")["fits"]),
    (W6, "the A10G decodes about twice as fast as the L4", lambda: 1.5 < ratio(calc(ONE_A10G, "decode_tokens_per_s"), calc(ONE_L4, "decode_tokens_per_s"))() < 2.5),
    (W6, "but\nprefills more slowly", lambda: calculator(ONE_A10G + PROMPT)["time_to_first_token_ms"] > calculator(ONE_L4 + PROMPT)["time_to_first_token_ms"]),
    (W6, "the burst breaks the promise on both smaller cards", lambda: min(burst_ms(CHAT_L4), burst_ms(CHAT_A10G)) > 2000 > burst_ms(CHAT_H100)),
    (W6, "the gap is widest on the fastest GPU", lambda: gap(ONE_H100) > max(gap(ONE_L4), gap(ONE_A10G))),
    (W6, "it never does", lambda: aggregate_keeps_rising(CHAT_H100)),
    (W6, "Its decode rate is higher than the table's", lambda: calculator(CHAT_LINK)["decode_tokens_per_s"] > calculator(CHAT_H100)["decode_tokens_per_s"]),
    (W6, "not 2", lambda: ratio(calc(CHAT_H100_TP2, "decode_tokens_per_s"), calc(CHAT_H100, "decode_tokens_per_s"))() < 1.9),
    (W7, "The cheapest hour (the L4) gives the dearest token", lambda: calculator(L4_THREE)["cost_per_million_output_tokens_usd"] > calculator(A100)["cost_per_million_output_tokens_usd"] > calculator(CHAT_H100)["cost_per_million_output_tokens_usd"]),
    (W8, "one **H100 SXM** keeps", lambda: calculator(CARD_CHAT)["fits"] and not calculator(CARD_L4)["fits"] and calculator(CARD_L4_FP8)["fits"]),
    (W8, "it misses the two-hour window more than four times over", lambda: calculator(EMBED_WINDOW)["work_items"] / worker_rate() / 3600 > 4 * 2),
    (W8, "It does not fit one 80 GB GPU", lambda: not calculator(FULL)["fits"] and calculator(FULL_4)["fits"]),
    (W8, "one H100 (or one A100 80GB) is enough", lambda: calculator(LORA)["fits"] and calculator(LORA.replace("h100-sxm", "a100-80gb"))["fits"]),
    (W8, "it fits a 24 GB L4", lambda: calculator(QLORA_L4)["fits"]),
    (W8, "inside the window", lambda: calc(EMBED_CPU, "hours_needed")() < 2),
    (W8, "a spot T4\nis the cheapest", lambda: calc(EMBED_T4, "cost_usd")() < min(calc(EMBED_T4, "api_cost_usd")(), calc(EMBED_CPU, "cost_usd")())),
    (W8, "a whole CPU server manages more than twice that", lambda: calc(EMBED_CPU, "items_per_s_per_worker")() > 2 * calculator(EMBED_WINDOW)["required_items_per_s"]),
    (W8, "The cheapest run is not on the cheapest GPU", lambda: calculator(LORA)["cost_per_run_usd"] < calculator(QLORA_L4)["cost_per_run_usd"]),
    (W7, "such as Llama 3.1 70B, costs\n$0.90 for each", lambda: catalogue("managed-api-80b", "price_per_million_input_tokens_usd")() == catalogue("managed-api-80b", "price_per_million_output_tokens_usd")()),
    (W7, "it recommends the managed API", lambda: comparison(CARD_CHAT_PATHS)["recommended"]["path"] == "managed_api"),
    (W7, "The cheapest\nself-hosted option that meets the card is 4 × NVIDIA T4", lambda: comparison(CARD_CHAT_PATHS)["runner_up"]["accelerator"] == "t4" and comparison(CARD_CHAT_PATHS)["runner_up"]["count"] == 4),
    (W8, "a spot T4\nis the cheapest, and the comparison of paths recommends it", lambda: comparison(CARD_EMBED_PATHS)["recommended"]["accelerator"] == "t4"),
    (W8, "puts the cheapest on one NVIDIA GH200", lambda: comparison(CARD_TRAIN_PATHS)["recommended"]["accelerator"] == "gh200" and comparison(CARD_TRAIN_PATHS)["recommended"]["count"] == 1),
    (W8, "as fast as the H100 SXM", lambda: option(CARD_TRAIN_PATHS, "gh200", "hours_per_run")() == calculator(CARD_TRAIN)["hours_per_run"]),
    (W8, "it costs a third\nmore, not several times more", lambda: 1.2 < calc(FULL_SAME, "cost_per_run_usd")() / calc(CARD_TRAIN, "cost_per_run_usd")() < 1.5),
    (Q2, "leaves little or no room for a KV cache", lambda: calculator(SEVENTY_B_TP + "&weight_precision=fp8")["max_active_users"] <= 1),
    (W7, "so the chat card needs four", lambda: calculator(V5E)["fits"] and not calculator(V5E.replace("tensor_parallel=4", "tensor_parallel=2"))["fits"]),
    (W8, "And not the EPYC CPU server", lambda: not next(o for o in comparison(CARD_CHAT_PATHS)["options"] if o["accelerator"] == "cpu-server")["meets"]),
    (W8, "A two-socket Xeon 6 server with AMX does meet the card", lambda: next(o for o in comparison(CARD_CHAT_PATHS)["options"] if o["accelerator"] == "cpu-xeon6-2s")["meets"]),
    (W8, "Not one L4 at bf16: it holds 4 of the\n20 users, and the comparison rejects it on the time between tokens", lambda: next(o for o in comparison(CARD_CHAT_PATHS)["options"] if o["accelerator"] == "l4" and o["count"] == 1)["limiter"] == "bandwidth"),
    (W7, "far less than the", lambda: calculator(API_DAY)["api_cost_usd"] < H100_DAY()),
]  # fmt: skip


@pytest.mark.parametrize("claim", CLAIMS, ids=[f"{c[0]}:{c[1][:40]}" for c in CLAIMS])
def test_lesson_judgement_holds_in_the_engine(claim: Claim) -> None:
    """A judgement the lesson states (fits, cheaper, slower) is what the engine gives today."""
    file, text, holds = claim
    words = " ".join(text.split())
    assert words in " ".join((LESSONS / file).read_text().split()), f"{file}: {text!r} is gone"
    assert holds(), f"{file}: the engine no longer agrees that {text!r}"


def _pattern(figure: Figure) -> re.Pattern[str]:
    """The text as a regex: any run of whitespace matches any other, each `{}` a number."""
    parts = figure.text.split("{}")
    escaped = [r"\s+".join(re.escape(word) for word in re.split(r"\s+", part)) for part in parts]
    return re.compile(NUMBER.join(escaped))


def _region(figure: Figure, content: str) -> tuple[int, int]:
    if not figure.after:
        return 0, len(content)
    start = content.index(figure.after)
    end = content.find("\n[[items]]", start)
    return start, len(content) if end == -1 else end


def locate(figure: Figure, content: str) -> tuple[int, int, str]:
    """Where the figure stands in the file (start, end) and the text found there."""
    start, end = _region(figure, content)
    matches = list(_pattern(figure).finditer(content, start, end))
    assert len(matches) == 1, f"{figure.file}: {len(matches)} matches for {figure.text!r}"
    match = matches[0]
    group = figure.which + 1
    return match.start(group), match.end(group), match.group(group)


def shown(figure: Figure) -> str:
    value = figure.value()
    return format(round(value) if figure.fmt.endswith("d") else value, figure.fmt)


@pytest.mark.parametrize("figure", FIGURES, ids=[f.id for f in FIGURES])
def test_lesson_figure_is_the_engines(figure: Figure) -> None:
    """The number the lesson shows is the number the engine gives today, at the stated rounding."""
    content = (LESSONS / figure.file).read_text()
    _, _, found = locate(figure, content)
    assert found == shown(figure), f"{figure.file}: {figure.text!r} shows {found}"


def refresh() -> list[str]:
    """Rewrite every figure in place with the engine's value; returns what changed."""
    changed = []
    for figure in FIGURES:
        path = LESSONS / figure.file
        content = path.read_text()
        start, end, found = locate(figure, content)
        value = shown(figure)
        if found != value:
            path.write_text(content[:start] + value + content[end:])
            changed.append(f"{figure.file}: {found} -> {value} ({figure.text[:60]!r})")
    return changed


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    if "--refresh" in sys.argv:
        print("\n".join(refresh()) or "every figure is current")
