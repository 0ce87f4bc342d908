"""Figures collected by the tests, and their Markdown tables (printed at the end of the run;
written to $FAILOVER_REPORT when set)."""

from __future__ import annotations

import statistics
from typing import Any, Dict, List

FAILOVERS: List[Dict[str, Any]] = []
COSTS: List[Dict[str, Any]] = []
FAULTS: List[Dict[str, Any]] = []
MINREP: List[Dict[str, Any]] = []


def _mmm(xs: List[float], fmt: str = "{:.0f}") -> str:
    if not xs:
        return "-"
    return " / ".join(fmt.format(v) for v in (min(xs), statistics.median(xs), max(xs)))


def _lag(lag: Any) -> str:
    return "direct" if lag is None else f"{lag:g} ms"


def tables() -> str:
    out: List[str] = []
    if FAILOVERS:
        out += ["Failover (min / median / max over the runs; a negative count over the limit is units "
                "consumed but never admitted):", "",
                "| mode | lag | runs | limit | admitted/s at the kill | requests over the limit | % of the limit "
                "| writes the replica had not received | lost window (ms) | replica behind before the kill (bytes) "
                "| failover (s) |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        groups: Dict[Any, List[Dict[str, Any]]] = {}
        for r in FAILOVERS:
            groups.setdefault((r["strict"], r["lag_ms"]), []).append(r)
        def order(item: Any) -> Any:
            (strict, lag), _ = item
            return (strict, -1 if lag is None else lag)

        for (strict, lag), rs in sorted(groups.items(), key=order):
            lost = [r["lost_writes"] for r in rs if r["lost_writes"] is not None]
            window = [1000.0 * r["lost_writes"] / r["rate_at_kill"] for r in rs
                      if r["lost_writes"] is not None and r["rate_at_kill"] > 0]
            if strict:  # nothing admitted is lost; the figure would count units consumed, not admitted
                lost, window = [], []
            out.append(f"| {'strict (WAIT 1)' if strict else 'async'} | {_lag(lag)} | {len(rs)} | {rs[0]['limit']} "
                       f"| {_mmm([r['rate_at_kill'] for r in rs])} | {_mmm([r['over'] for r in rs])} "
                       f"| {_mmm([r['over_pct'] for r in rs], '{:.2f}')} | {_mmm(lost)} "
                       f"| {_mmm(window, '{:.1f}')} | {_mmm([r.get('replica_behind_bytes', 0) for r in rs])} "
                       f"| {_mmm([r['failover_s'] for r in rs], '{:.1f}')} |")
        out += ["", "Leases across the failover (sums over the runs; max live: the largest number held at once "
                "in the holders' own view):", "",
                "| mode | lag | held at the kill | survived (RENEW 1) | lost (RENEW 0) | unresolved "
                "| max live, fenced | max live, optimistic | slots |",
                "|---|---|---|---|---|---|---|---|---|"]
        for (strict, lag), rs in sorted(groups.items(), key=order):
            out.append(f"| {'strict (WAIT 1)' if strict else 'async'} | {_lag(lag)} "
                       f"| {sum(r['leases_at_failover'] for r in rs)} | {sum(r['leases_survived'] for r in rs)} "
                       f"| {sum(r['leases_lost'] for r in rs)} | {sum(len(r['leases_unresolved']) for r in rs)} "
                       f"| {max(r['max_live_fenced'] for r in rs)} | {max(r['max_live_optimistic'] for r in rs)} "
                       f"| {rs[0]['slots']} |")
    if COSTS:
        out += ["", "Strict mode cost per call, one client on loopback (ms):", "",
                "| lag | calls | decision, median | decision, p99 | decision + WAIT 1, median "
                "| decision + WAIT 1, p99 |", "|---|---|---|---|---|---|"]
        for c in COSTS:
            out.append(f"| {c['lag_ms']:g} ms | {c['n']} | {c['plain_median_ms']:.3f} | {c['plain_p99_ms']:.3f} "
                       f"| {c['durable_median_ms']:.3f} | {c['durable_p99_ms']:.3f} |")
    if FAULTS:
        out += ["", "Partitions and pauses (1 s each; client timeout 100 ms):", "",
                "| fault | calls during (open/closed) | fallbacks during (open/closed) | sources | resync |",
                "|---|---|---|---|---|"]
        for f in FAULTS:
            src = ", ".join(f["open_fallback_sources"] + f["closed_fallback_sources"]) or "redis only"
            sync = ", ".join(f"{k} +{v}" for k, v in f["sync"].items() if v) or "none"
            out.append(f"| {f['fault']} | {f['open_calls_during']}/{f['closed_calls_during']} "
                       f"| {f['open_fallbacks_during']}/{f['closed_fallbacks_during']} | {src} | {sync} |")
    for r in MINREP:
        out += ["", f"min-replicas-to-write 1, min-replicas-max-lag 2, replica stopped: writes refused after "
                f"{r['refused_after_s']:.1f} s ({r['error'].split(' ')[0]}); fail-open answered {r['open'][:2]}, "
                f"fail-closed {r['closed'][:2]}, RL.PEEK {r['peek']}; writes accepted again "
                f"{r['recovered_after_s']:.1f} s after the stop (SIGCONT at the refusal)."]
    return "\n".join(out)
