"""Aware moments as whole microseconds since the epoch, for signed payloads: exact both ways,
unlike floats."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def epoch_micros(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICROSECOND


def from_epoch_micros(micros: int) -> datetime:
    return _EPOCH + micros * _MICROSECOND
