"""FSRS parameters learnt with fsrs-rs-python on a real learner's review log, scored by time.

    .venv/bin/python bench/fsrs_parameters.py [--review-log PATH] [--train-fraction 0.7]

The first 70 % of the reviews (by time) are the training period, the long-term reviews after it
the held-out set (the nightly job's split). Prints held-out log loss, RMSE (bins) and calibration
(mean predicted minus observed recall) of FSRS-6's defaults, of personal parameters trained on
the learner's first 512 … all training reviews, and of the pooled parameters (the shared log has
one learner, so the course pool is every review of the training period: the last row), with the
optimiser's time and memory for each size. Also the retention/workload curve of the learnt set.
Pure computation through quizzes.fsrs_optimizer; no database.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import resource
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from quizzes import fsrs_optimizer as opt

DEFAULT_LOG = (
    Path(__file__).resolve().parent.parent.parent / "shared/data/fsrs-review-log/review_logs.csv"
)
SIZES = (512, 1024, 2048, 4096, 6144)


def read_log(path: Path) -> list[tuple[str, opt.Review]]:
    with path.open(newline="") as fh:
        rows = [
            (
                r["card_id"],
                opt.Review(
                    at=datetime.fromisoformat(r["review_time"]), rating=int(r["review_rating"])
                ),
            )
            for r in csv.DictReader(fh)
        ]
    rows.sort(key=lambda row: row[1].at)
    return rows


def histories(rows: list[tuple[str, opt.Review]]) -> list[list[opt.Review]]:
    by_card: dict[str, list[opt.Review]] = defaultdict(list)
    for card, review in rows:
        by_card[card].append(review)
    return list(by_card.values())


def _train_in_child(rows: list[tuple[str, opt.Review]], cutoff: datetime, out) -> None:  # type: ignore[no-untyped-def]
    """Train in a fresh process so its peak memory is the optimiser's alone."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    split = opt.time_split(opt.samples_from_histories(histories(rows)), cutoff)
    started = time.perf_counter()
    weights = opt.train(split.train)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out.send((weights, seconds, (after - before) / 1024, after / 1024, len(split.train)))
    out.close()


def train_measured(rows: list[tuple[str, opt.Review]], cutoff: datetime):  # type: ignore[no-untyped-def]
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_train_in_child, args=(rows, cutoff, send))
    child.start()
    result = receive.recv()
    child.join()
    return result


def row(name: str, scores: opt.Scores | None, extra: str = "") -> str:
    if scores is None:
        return f"{name:<28} no held-out reviews"
    return (
        f"{name:<28} {scores.log_loss:>8.4f} {scores.rmse_bins:>7.2%} "
        f"{scores.calibration:>+8.3f} {extra}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--review-log", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--train-fraction", type=float, default=0.7)
    args = parser.parse_args()
    if not args.review_log.exists():
        sys.exit(f"No review log at {args.review_log}: pass --review-log PATH")
    if not 0.1 <= args.train_fraction <= 0.9:
        sys.exit("--train-fraction: must be from 0.1 to 0.9")
    rows = read_log(args.review_log)
    cutoff = opt.cutoff_at_fraction([r.at for _, r in rows], args.train_fraction)
    training = [r for r in rows if r[1].at < cutoff]
    heldout = opt.time_split(opt.samples_from_histories(histories(rows)), cutoff).heldout
    print(
        f"{len(rows)} reviews of {len(histories(rows))} cards; cut-off {cutoff:%Y-%m-%d %H:%M} "
        f"UTC: {len(training)} training reviews, {len(heldout)} held-out long-term reviews"
    )
    print(f"fsrs-rs-python {opt.library_version()}")
    print(f"{'set':<28} {'log loss':>8} {'RMSE':>7} {'calib.':>8} optimiser")
    print(row("defaults (FSRS-6)", opt.score(opt.DEFAULT_WEIGHTS, heldout)))
    learnt: tuple[float, ...] = opt.DEFAULT_WEIGHTS
    sizes = [n for n in SIZES if n < len(training)] + [len(training)]
    for n in sizes:
        learnt, seconds, grown_mb, peak_mb, samples = train_measured(training[:n], cutoff)
        name = f"personal, first {n} reviews" if n < len(training) else f"pooled = all {n}"
        print(
            row(
                name,
                opt.score(learnt, heldout),
                f"{seconds:.2f} s, +{grown_mb:.0f} MB (peak {peak_mb:.0f} MB), {samples} samples",
            )
        )
    print("\nRetention against workload, learnt set, 60 items, 20 new and 200 reviews a day:")
    started = time.perf_counter()
    curve = opt.workload_curve(
        learnt, items=60, daily_new_limit=20, daily_review_limit=200, maximum_interval_days=36500
    )
    print(f"{'retention':>9} {'reviews/day':>12} {'min/day':>8} {'remembered':>10}")
    for p in curve.points:
        print(
            f"{p.retention:>9.2f} {p.reviews_per_day:>12.2f} {p.minutes_per_day:>8.2f} "
            f"{p.memorized:>10.1f}"
        )
    print(
        f"minimum recommended retention {curve.minimum_recommended:.2f}; "
        f"curve computed in {time.perf_counter() - started:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
