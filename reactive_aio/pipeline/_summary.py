"""The text a finished run prints: counts, rates over the stream phase, the per-carrier table."""

from __future__ import annotations

__all__ = ("print_summary",)

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ._run import PipelineResult


def print_summary(result: PipelineResult, log: TextIO) -> None:
    stream = result.phases.get("stream", 0.0)
    streamed = result.read - result.skipped
    rate = f" ({streamed / stream:,.0f} records/s)" if stream > 0 else ""
    writes = f"{result.writes} Parquet write{'s' * (result.writes != 1)}"
    if result.skipped:
        print(f"resumed: skipped {result.skipped:,} records an earlier run landed", file=log)
    print(
        f"streamed {streamed:,} records in {stream:.1f} s{rate}: landed {result.landed:,}, "
        f"rejected {result.rejected:,} ({writes})",
        file=log,
    )
    phases = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in result.phases.items())
    print(f"phases: {phases}; total {result.seconds:.1f} s", file=log)
    if result.reasons:
        top = ", ".join(f"{field} {count:,}" for field, count in list(result.reasons.items())[:8])
        print(f"rejected by field: {top}", file=log)
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
    print(
        f"outputs in {result.out}: events/ (landed records), carrier_hourly/ (per carrier and "
        "scheduled hour, UTC), rejected/ (each rejected record with its reason)",
        file=log,
    )
    if result.chart is not None:
        print(f"chart: {result.chart}", file=log)
