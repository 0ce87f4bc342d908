"""Metrics hooks: subclass Metrics (every method is a no-op) or pass any object with these methods."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .decision import Decision

__all__ = ["Metrics", "result_of"]


class Metrics:
    def on_decision(self, name: str, decision: "Decision", latency_s: float) -> None:
        """Every decision: one per limit (check_all: each limit that admitted, or that denied)."""

    def on_error(self, name: str, exc: BaseException) -> None:
        """Every failed Redis call, per limit involved (absorbed by the failure policy or raised)."""

    def on_fallback(self, name: str, policy: str) -> None:
        """Every activation of the failure policy ("open", "closed" or "local")."""


def result_of(decision: "Decision") -> str:
    """The `result` label: allowed | denied | fail_open | fail_closed | local | durable."""
    source = decision.source
    if source != "redis":
        return source
    return "allowed" if decision.allowed else "denied"
