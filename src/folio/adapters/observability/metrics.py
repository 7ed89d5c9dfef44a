"""The Prometheus ``Telemetry`` (prometheus_client): latency histograms per tool and per model,
turns by outcome, tokens by kind, import stages, and the turns in flight; HTTP requests by route
template and status with their latency (``http_request``, from the API's middleware); the
process's memory, CPU and open files; ``folio_build_info{version}``.

Several ``folio serve`` workers: prometheus_client's multiprocess mode. ``folio serve`` points
``PROMETHEUS_MULTIPROC_DIR`` at a fresh temporary folder before any worker starts; each worker
writes its values there and any worker's ``/metrics`` sums them all (the in-flight gauge counts
live workers only: a worker that stops removes its part). prometheus_client's process collector
reads only the process that answers, so there each worker copies its own figures into the folder
every few seconds (``ProcessSampler``): memory and open files per live worker (a ``pid`` label),
CPU seconds summed over every worker the server ran. Without that variable the values live in
this object's own registry with prometheus_client's default collectors (one process, and tests
that build several apps side by side).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
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
# Most requests answer in milliseconds; a turn (JSON or streamed whole) takes seconds.
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
SAMPLE_EVERY_S = 5.0


class PrometheusTelemetry:
    """A ``Telemetry`` writing prometheus_client metrics; ``render()`` is the ``/metrics`` body."""

    def __init__(self, *, version: str = "unknown") -> None:
        """``version``: the folio version ``folio_build_info`` names (the app passes it)."""
        # The mode prometheus_client chose when it was imported (from the variable then).
        self.multiprocess = bool(getattr(values.ValueClass, "_multiprocess", False))
        self._registry = CollectorRegistry()
        r = self._registry
        self.http_requests = Counter(
            "folio_http_requests",
            "HTTP requests answered, by method, route template and status",
            ["method", "route", "status"],
            registry=r,
        )
        self.http_seconds = Histogram(
            "folio_http_request_duration_seconds",
            "Time from a request's arrival to the end of its response (a stream's last byte), by"
            " method and route template",
            ["method", "route"],
            buckets=HTTP_BUCKETS,
            registry=r,
        )
        self.build_info = Gauge(
            "folio_build_info",
            "The folio version that answers (always 1)",
            ["version"],
            registry=r,
            multiprocess_mode="livemax",
        )
        self.build_info.labels(version).set(1)
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
        self._sampler: ProcessSampler | None = None
        if self.multiprocess:
            self._sampler = ProcessSampler(r)
            self._sampler.start()
        else:  # prometheus_client's defaults, read at each scrape
            ProcessCollector(registry=r)
            PlatformCollector(registry=r)
            GCCollector(registry=r)

    # --- HTTP (the API's middleware) -------------------------------------------------------------
    def http_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """One answered request; ``route`` is its template (``/api/v1/books/{book_id}``), never
        the path a client sent."""
        self.http_requests.labels(method, route, str(status)).inc()
        self.http_seconds.labels(method, route).observe(seconds)

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
        if self._sampler is None:
            return generate_latest(self._registry), CONTENT_TYPE_LATEST
        self._sampler.sample()  # the answering worker's figures as of now
        merged = CollectorRegistry()
        multiprocess.MultiProcessCollector(merged)  # type: ignore[no-untyped-call]
        PlatformCollector(registry=merged)
        return generate_latest(merged), CONTENT_TYPE_LATEST

    def close(self) -> None:
        """This process stops: its turns in flight and its process figures no longer count
        (multiprocess mode)."""
        if self._sampler is not None:
            self._sampler.stop()
            multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


class ProcessSampler:
    """Copies this process's figures from prometheus_client's ``ProcessCollector`` (memory, open
    files, start time, CPU seconds) into multiprocess metrics, every ``SAMPLE_EVERY_S`` seconds on
    a daemon thread and whenever ``sample()`` is called, so that any worker's ``/metrics`` shows
    every worker's: the gauges per live worker (``pid`` label), CPU seconds as one counter summed
    over every worker (a stopped one's seconds stay counted, as a counter must)."""

    GAUGES = (
        "process_resident_memory_bytes",
        "process_virtual_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
    )

    def __init__(self, registry: CollectorRegistry) -> None:
        self._source = ProcessCollector(registry=None)
        self._gauges = {
            name: Gauge(name, f"{name} of each live worker", registry=registry,
                        multiprocess_mode="liveall")
            for name in self.GAUGES
        }  # fmt: skip
        self._cpu = Counter(
            "process_cpu_seconds",
            "User and system CPU time of every worker, in seconds",
            registry=registry,
        )
        self._cpu_seen = 0.0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="folio-process-metrics", daemon=True)

    def start(self) -> None:
        self.sample()
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        while not self._stopped.wait(SAMPLE_EVERY_S):
            self.sample()

    def sample(self) -> None:
        with self._lock:
            for family in self._source.collect():
                for s in family.samples:
                    if s.name in self._gauges:
                        self._gauges[s.name].set(s.value)
                    elif s.name == "process_cpu_seconds_total" and s.value > self._cpu_seen:
                        self._cpu.inc(s.value - self._cpu_seen)
                        self._cpu_seen = s.value
