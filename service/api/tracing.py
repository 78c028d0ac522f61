"""OpenTelemetry tracing, off unless `SWARM_TRACING` is `otlp` or `console`.

Needs the `tracing` extra (`pip install 'swarm[tracing]'`). With `otlp`, spans go where the
standard `OTEL_EXPORTER_OTLP_*` variables say (default http://localhost:4318); `console`
prints them, for a quick look. One span per request, from Litestar's OpenTelemetryPlugin,
which wraps the whole app (unknown paths too).
"""

from __future__ import annotations

from typing import Any


def tracing_plugin(mode: str) -> Any:
    try:
        from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
            SpanExporter,
        )
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "SWARM_TRACING is on but OpenTelemetry is not installed: pip install 'swarm[tracing]'"
        ) from exc

    exporter: SpanExporter
    if mode == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    else:
        exporter = ConsoleSpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "swarm"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return OpenTelemetryPlugin(OpenTelemetryConfig(tracer_provider=provider))
