"""What the run reads from (and the one thing it writes to) the cluster's database, by plain SQL
on the driver's own connection: table names and status values come from the seed's output, which
read them from the models."""

from __future__ import annotations

from typing import Any

from ops.cluster.records import AppliedGrade, Promise, ReleaseRow

Seed = dict[str, Any]


def query(db: Any, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    return list(db.execute(sql, params).fetchall())


def cards_fall_due(db: Any, seed: Seed) -> None:
    """The digest learners' cards due an hour ago: the next scan owes each of them a digest."""
    query(
        db,
        f"UPDATE {seed['tables']['schedule']} SET due = now() - interval '1 hour' "  # noqa: S608
        "WHERE learner_id = ANY(%s) RETURNING id",
        seed["digest_learner_ids"],
    )


def digest_progress(db: Any, seed: Seed) -> tuple[int, int]:
    """Digests of the learners whose cards the run made due: (written, sent)."""
    row = query(
        db,
        "SELECT COUNT(*), COUNT(*) FILTER (WHERE status = %s) "  # noqa: S608
        f"FROM {seed['tables']['digest']} WHERE learner_id = ANY(%s)",
        seed["values"]["sent"],
        seed["digest_learner_ids"],
    )[0]
    return int(row[0]), int(row[1])


def sending_keys(db: Any, seed: Seed) -> set[str]:
    """Outbox rows being sent right now, as `digest<id>` and `capstone<id>`."""
    t, sending = seed["tables"], seed["values"]["sending"]
    digests = query(db, f"SELECT id FROM {t['digest']} WHERE status = %s", sending)  # noqa: S608
    emails = query(db, f"SELECT id FROM {t['email']} WHERE status = %s", sending)  # noqa: S608
    return {f"digest{r[0]}" for r in digests} | {f"capstone{r[0]}" for r in emails}


def outbox_rows(db: Any, seed: Seed) -> list[tuple[str, str, float]]:
    """(key, status, seconds since the row last changed) of every outbox row."""
    rows = []
    for prefix, table in (
        ("digest", seed["tables"]["digest"]),
        ("capstone", seed["tables"]["email"]),
    ):
        rows += [
            (f"{prefix}{r[0]}", str(r[1]), float(r[2]))
            for r in query(
                db,
                f"SELECT id, status, EXTRACT(EPOCH FROM now() - updated_at) FROM {table}",  # noqa: S608
            )
        ]
    return rows


def applied_grades(db: Any, seed: Seed) -> list[AppliedGrade]:
    """Every review log of the learners the run drove."""
    t = seed["tables"]
    return [
        AppliedGrade(r[0], str(r[1]), int(r[2]))
        for r in query(
            db,
            f"SELECT u.email, l.idempotency_key, l.rating FROM {t['log']} l "  # noqa: S608
            f"JOIN {t['user']} u ON u.id = l.learner_id WHERE u.email LIKE %s",
            "cluster-learner%",
        )
    ]


def release_rows(db: Any, seed: Seed) -> list[ReleaseRow]:
    """Per submission: its released grades and its promised grade-released emails."""
    t, v = seed["tables"], seed["values"]
    return [
        ReleaseRow(int(r[0]), int(r[1]), int(r[2]))
        for r in query(
            db,
            f"SELECT s.id, (SELECT COUNT(*) FROM {t['grade']} g WHERE g.submission_id = s.id "  # noqa: S608
            f"AND g.status = %s), (SELECT COUNT(*) FROM {t['email']} e "
            f"WHERE e.submission_id = s.id AND e.kind = %s) FROM {t['submission']} s",
            v["released"],
            v["grade_released"],
        )
    ]


def promises(db: Any, seed: Seed) -> list[Promise]:
    """Every outbox row (digests and capstone emails) with its status and recipient."""
    t = seed["tables"]
    digests = query(
        db,
        f"SELECT d.id, d.status, u.email FROM {t['digest']} d "  # noqa: S608
        f"JOIN {t['user']} u ON u.id = d.learner_id",
    )
    emails = query(
        db,
        f"SELECT e.id, e.status, u.email FROM {t['email']} e "  # noqa: S608
        f"JOIN {t['submission']} s ON s.id = e.submission_id "
        f"JOIN {t['user']} u ON u.id = s.learner_id",
    )
    return [Promise(f"digest{r[0]}", r[1], r[2]) for r in digests] + [
        Promise(f"capstone{r[0]}", r[1], r[2]) for r in emails
    ]
