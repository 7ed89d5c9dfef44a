"""The Prometheus ``Telemetry`` (prometheus_client): latency histograms per tool and per model,
turns by outcome, tokens by kind, import stages, and the turns in flight.

Several ``folio serve`` workers: prometheus_client's multiprocess mode. ``folio serve`` points
``PROMETHEUS_MULTIPROC_DIR`` at a fresh temporary folder before any worker starts; each worker
writes its values there and any worker's ``/metrics`` sums them all (the in-flight gauge counts
live workers only: a worker that stops removes its part). Without that variable the values live
in this object's own registry (one process, and tests that build several apps side by side).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
    values,
)

from folio.adapters.observability import context
from folio.domain.telemetry import ModelCallReport, ToolCallReport, TurnReport, TurnScope

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# Tools answer in milliseconds (a search embeds the query); models and turns take seconds.
TOOL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
MODEL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160)


class PrometheusTelemetry:
    """A ``Telemetry`` writing prometheus_client metrics; ``render()`` is the ``/metrics`` body."""

    def __init__(self) -> None:
        # The mode prometheus_client chose when it was imported (from the variable then).
        self.multiprocess = bool(getattr(values.ValueClass, "_multiprocess", False))
        self._registry = CollectorRegistry()
        r = self._registry
        self.tool_seconds = Histogram(
            "folio_tool_call_duration_seconds",
            "Duration of the agent's tool calls, by tool and outcome",
            ["tool", "outcome"],
            buckets=TOOL_BUCKETS,
            registry=r,
        )
        self.model_seconds = Histogram(
            "folio_model_call_duration_seconds",
            "Duration of the calls to the chat model, by provider, model and outcome",
            ["provider", "model", "outcome"],
            buckets=MODEL_BUCKETS,
            registry=r,
        )
        self.turn_seconds = Histogram(
            "folio_turn_duration_seconds",
            "Duration of chat turns, by outcome",
            ["outcome"],
            buckets=MODEL_BUCKETS,
            registry=r,
        )
        self.turns = Counter("folio_turns", "Chat turns, by outcome", ["outcome"], registry=r)
        self.tokens = Counter(
            "folio_tokens",
            "Model tokens by kind: input (not from the cache), cached (read from the prompt"
            " cache), cache_write (written to it), output",
            ["provider", "model", "kind"],
            registry=r,
        )
        self.import_stages = Counter(
            "folio_import_stages", "Book imports entering each stage", ["stage"], registry=r
        )
        self.in_flight = Gauge(
            "folio_turns_in_flight",
            "Chat turns running now",
            registry=r,
            multiprocess_mode="livesum",
        )

    # --- Telemetry ------------------------------------------------------------------------------
    def turn(self, scope: TurnScope) -> AbstractContextManager[None]:
        return self._turn(scope)

    @contextmanager
    def _turn(self, scope: TurnScope) -> Iterator[None]:
        token = context.turn_scope.set(scope)
        self.in_flight.inc()
        try:
            yield
        finally:
            self.in_flight.dec()
            context.turn_scope.reset(token)

    def turn_finished(self, report: TurnReport) -> None:
        self.turns.labels(report.outcome.value).inc()
        self.turn_seconds.labels(report.outcome.value).observe(report.duration_s)

    def tool_called(self, report: ToolCallReport) -> None:
        self.tool_seconds.labels(report.tool, report.outcome).observe(report.duration_s)

    def model_called(self, report: ModelCallReport) -> None:
        labels = (report.provider, report.model)
        self.model_seconds.labels(*labels, report.outcome).observe(report.duration_s)
        usage = report.usage
        for kind, count in (
            ("input", usage.uncached_input_tokens),
            ("cached", usage.cache_read_tokens),
            ("cache_write", usage.cache_write_tokens),
            ("output", usage.output_tokens),
        ):
            if count:
                self.tokens.labels(*labels, kind).inc(count)

    def import_stage(self, stage: str) -> None:
        self.import_stages.labels(stage).inc()

    # --- exposition -----------------------------------------------------------------------------
    def render(self) -> tuple[bytes, str]:
        """The metrics in Prometheus' text format, and its content type (every worker's values
        in multiprocess mode)."""
        if not self.multiprocess:
            return generate_latest(self._registry), CONTENT_TYPE_LATEST
        merged = CollectorRegistry()
        multiprocess.MultiProcessCollector(merged)  # type: ignore[no-untyped-call]
        return generate_latest(merged), CONTENT_TYPE_LATEST

    def close(self) -> None:
        """This process stops: its turns in flight no longer count (multiprocess mode)."""
        if self.multiprocess:
            multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]
