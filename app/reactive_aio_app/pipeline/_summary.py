"""The text a finished run, worker or aggregate prints: counts, rates over the stream phase,
the per-carrier table; and the same as data (`summary_record`), which a run or an aggregate
writes to ``OUT/summary.json`` and the live page shows."""

from __future__ import annotations

__all__ = ("SUMMARY_FILE", "print_summary", "rejection_causes", "summary_record", "write_summary")

from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ._outputs import write_json

if TYPE_CHECKING:
    from ._results import PipelineResult

SUMMARY_FILE = "summary.json"


def summary_record(result: PipelineResult) -> dict[str, Any]:
    """What `print_summary` prints, as JSON-ready data: the counts, the seconds of each phase,
    the rejections by cause, the per-carrier table and the outputs' paths."""
    stream = result.phases.get("stream", 0.0)
    streamed = result.read - result.skipped
    out = result.out
    return {
        "role": result.role,
        "read": result.read,
        "landed": result.landed,
        "rejected": result.rejected,
        "skipped": result.skipped,
        "resumed": result.resumed,
        "writes": result.writes,
        "records_per_second": round(streamed / stream, 1) if stream > 0 else None,
        "seconds": round(result.seconds, 3),
        "phases": {name: round(seconds, 3) for name, seconds in result.phases.items()},
        "rejections": dict(result.reasons),
        "carriers": result.summary,
        "dead_letter": result.dead_letter,
        "outputs": {
            "out": str(out),
            "events": str(out / "events"),
            "carrier_hourly": str(out / "carrier_hourly"),
            "rejected": str(out / "rejected"),
            "chart": None if result.chart is None else str(result.chart),
            "logs": str(out / "logs"),
        },
    }


def write_summary(result: PipelineResult) -> Path:
    """Write `summary_record` to ``OUT/summary.json`` atomically; returns its path."""
    path = result.out / SUMMARY_FILE
    write_json(path, summary_record(result))
    return path


def print_summary(result: PipelineResult, log: TextIO) -> None:
    writes = f"{result.writes} Parquet write{'s' * (result.writes != 1)}"
    if result.role == "worker":
        print(
            f"worker: took {result.read:,} messages: landed {result.landed:,} ({writes}), "
            f"found {result.skipped:,} landed by another worker or run (now acknowledged), "
            f"rejected {result.rejected:,} to {result.dead_letter}",
            file=log,
        )
        _print_phases(result, log)
        print(
            f"once every worker into {result.out} has ended, 'reactive-aio aggregate' with the "
            "same --source and --out computes rejected/, carrier_hourly/ and delays.png",
            file=log,
        )
        return
    if result.role == "aggregate":
        print(
            f"aggregated the {result.read:,} records of the stream: landed {result.landed:,} "
            f"(each once), rejected {result.rejected:,} (in {result.dead_letter})",
            file=log,
        )
    else:
        stream = result.phases.get("stream", 0.0)
        streamed = result.read - result.skipped
        rate = f" ({streamed / stream:,.0f} records/s)" if stream > 0 else ""
        if result.skipped or result.resumed:
            again = "" if result.dead_letter is None else " (redelivered, and now acknowledged)"
            print(
                f"resumed: skipped {result.skipped:,} records an earlier run landed{again}",
                file=log,
            )
        print(
            f"streamed {streamed:,} records in {stream:.1f} s{rate}: landed {result.landed:,}, "
            f"rejected {result.rejected:,} ({writes})",
            file=log,
        )
    _print_phases(result, log)
    if result.reasons:
        print(f"rejected records, by what was wrong: {rejection_causes(result.reasons)}", file=log)
    print(
        f"{'carrier':<8}{'airline':<30}{'flights':>9}{'cancelled':>11}"
        f"{'dep (min)':>11}{'arr (min)':>11}",
        file=log,
    )
    for row in result.summary:
        dep = "" if row["dep_delay_mean"] is None else f"{row['dep_delay_mean']:.1f}"
        arr = "" if row["arr_delay_mean"] is None else f"{row['arr_delay_mean']:.1f}"
        print(
            f"{row['carrier']:<8}{(row['airline'] or '')[:29]:<30}{row['flights']:>9,}"
            f"{row['cancelled']:>11,}{dep:>11}{arr:>11}",
            file=log,
        )
    print(
        "dep, arr: mean departure and arrival delay in minutes (negative: early); "
        "cancelled: no departure time",
        file=log,
    )
    rejected = (
        "each rejected record with its reason"
        if result.dead_letter is None
        else f"every record of the stream in the dead letter {result.dead_letter}"
    )
    print(
        f"outputs in {result.out}: events/ (landed records), carrier_hourly/ (per carrier and "
        f"scheduled hour, UTC), rejected/ ({rejected})",
        file=log,
    )
    if result.chart is not None:
        print(f"chart: {result.chart}", file=log)


def rejection_causes(reasons: dict[str, int]) -> str:
    """The commonest causes of rejection, counted: ``bad dep_time 12, unreadable record 1``
    (a reason names the field at fault, or ``record`` when the record itself was unreadable:
    not JSON, or the wrong number of fields)."""
    return ", ".join(
        f"{'unreadable record' if field == 'record' else f'bad {field}'} {count:,}"
        for field, count in list(reasons.items())[:8]
    )


def _print_phases(result: PipelineResult, log: TextIO) -> None:
    phases = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in result.phases.items())
    print(f"phases: {phases}; total {result.seconds:.1f} s", file=log)
