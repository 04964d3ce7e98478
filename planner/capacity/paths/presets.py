"""Service-level presets: per use case, the p95 time to first token and inter-token latency a
serving plan must hold, the typical prompt and answer lengths, and the peak-to-mean traffic factor,
each with its published source.

Most presets are the upper ends of the ranges llm-d's planner ships (llm-d-incubation/llm-d-planner,
src/planner/data/configuration/usecase_slo_workload.json: "Research-backed SLOs (SCORPIO, vLLM,
Nielsen UX)"), with its peak multiplier; the agent preset is MLPerf Inference's interactive
scenario for Llama-2-70B; batch has no latency target (MLPerf's Offline scenario).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from planner.capacity.units import CapacityInputError

LLM_D: Final = (
    "llm-d planner's use-case presets (github.com/llm-d-incubation/llm-d-planner, "
    "usecase_slo_workload.json)"
)
MLPERF_INTERACTIVE: Final = (
    "MLPerf Inference v5.0, Llama-2-70B interactive scenario: p99 TTFT ≤ 450 ms, p99 TPOT ≤ 40 ms "
    "(mlcommons.org, inference datacenter rules)"
)
MLPERF_OFFLINE: Final = "MLPerf Inference Offline scenario: throughput only, no latency bound"
# MLPerf Inference's server scenario for Llama-2-70B (p99 TTFT ≤ 2 s, p99 TPOT ≤ 200 ms) is the
# loosest interactive bound a published benchmark holds; the course's own chat card uses 2 s.


@dataclass(frozen=True, slots=True)
class UseCase:
    name: str
    label: str
    ttft_ms: Fraction | None  # at `percentile`
    itl_ms: Fraction | None  # at `percentile`
    prompt_tokens: int
    output_tokens: int
    peak_factor: Fraction  # peak arrivals ÷ the day's mean
    source: str
    percentile: int = 95
    interactive: bool = True


USE_CASES: Final[dict[str, UseCase]] = {
    u.name: u
    for u in (
        # chatbot_conversational: TTFT 100-500 ms, ITL 15-50 ms, 512 in / 256 out, peak × 2.0
        UseCase("chat", "Chat", Fraction(500), Fraction(50), 512, 256, Fraction(2), LLM_D),
        # code_completion: TTFT 50-200 ms, ITL 10-35 ms, 512 / 256, peak × 2.5
        UseCase(
            "code_completion",
            "Code completion",
            Fraction(200),
            Fraction(35),
            512,
            256,
            Fraction(5, 2),
            LLM_D,
        ),
        # document_analysis_rag: TTFT 400-1,200 ms, ITL 25-60 ms, 4,096 / 512, peak × 2.5
        UseCase(
            "rag",
            "RAG / document Q&A",
            Fraction(1200),
            Fraction(60),
            4096,
            512,
            Fraction(5, 2),
            LLM_D,
        ),
        # long_document_summarization: TTFT 800-3,000 ms, ITL 30-70 ms, 10,240 / 1,536, peak × 1.5
        UseCase(
            "long_document",
            "Long-document analysis",
            Fraction(3000),
            Fraction(70),
            10_240,
            1536,
            Fraction(3, 2),
            LLM_D,
        ),
        # An agent's step re-reads its transcript and writes a short tool call; held at MLPerf's
        # interactive bounds (p99). Lengths indicative; peak as llm-d's chatbot.
        UseCase(
            "agent",
            "Agent steps",
            Fraction(450),
            Fraction(40),
            2048,
            128,
            Fraction(2),
            MLPERF_INTERACTIVE,
            percentile=99,
        ),
        # Offline: no latency target; the volume still has to be carried. Lengths as llm-d's
        # short summarization (4,096 / 512); steady traffic.
        UseCase(
            "batch",
            "Batch (no latency target)",
            None,
            None,
            4096,
            512,
            Fraction(1),
            MLPERF_OFFLINE,
            interactive=False,
        ),
    )
}
DEFAULT_USE_CASE: Final = "chat"


def use_case(name: str | None) -> UseCase:
    """The named preset (chat when none is named)."""
    key = (name or DEFAULT_USE_CASE).strip().lower().replace("-", "_")
    if key not in USE_CASES:
        raise CapacityInputError(
            "use_case", f"unknown use case {name!r}; use {', '.join(USE_CASES)}"
        )
    return USE_CASES[key]
