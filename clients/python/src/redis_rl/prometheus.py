"""prometheus_client adapter for the metrics hooks.

    from prometheus_client import CollectorRegistry
    from redis_rl.prometheus import PrometheusMetrics
    limiter = Limiter(r, metrics=PrometheusMetrics(registry=CollectorRegistry()))

redis_rl_decisions_total{limit,result}  result: allowed|denied|error|fail_open|fail_closed|local|durable
redis_rl_decision_seconds{limit}        histogram of decision latency (Redis round trip included)
redis_rl_fallbacks_total{limit,policy}  activations of the failure policy
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

from .metrics import Metrics, result_of

if TYPE_CHECKING:
    from .decision import Decision

__all__ = ["PrometheusMetrics"]

DEFAULT_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)


class PrometheusMetrics(Metrics):
    def __init__(self, registry: Optional[CollectorRegistry] = None, *, namespace: str = "redis_rl",
                 buckets: Sequence[float] = DEFAULT_BUCKETS) -> None:
        reg: Any = REGISTRY if registry is None else registry
        self.decisions = Counter(f"{namespace}_decisions", "Rate limit decisions by limit and result",
                                 ["limit", "result"], registry=reg)
        self.latency = Histogram(f"{namespace}_decision_seconds", "Decision latency, Redis round trip included",
                                 ["limit"], registry=reg, buckets=tuple(buckets))
        self.fallback = Counter(f"{namespace}_fallbacks", "Failure policy activations by limit and policy",
                                ["limit", "policy"], registry=reg)

    def on_decision(self, name: str, decision: "Decision", latency_s: float) -> None:
        self.decisions.labels(name, result_of(decision)).inc()
        self.latency.labels(name).observe(latency_s)

    def on_error(self, name: str, exc: BaseException) -> None:
        self.decisions.labels(name, "error").inc()

    def on_fallback(self, name: str, policy: str) -> None:
        self.fallback.labels(name, policy).inc()
