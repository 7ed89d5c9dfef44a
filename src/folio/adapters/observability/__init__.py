"""Observability adapters: the Prometheus ``Telemetry``, the request/turn context of log lines, and
the logging configuration of ``folio serve`` (JSON or text)."""
