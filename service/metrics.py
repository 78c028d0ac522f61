"""The service's Prometheus metrics, request latency by operation included. Served at /metrics.

Counters and histograms are process-wide, as prometheus_client wants; with several workers
`swarm serve` points PROMETHEUS_MULTIPROC_DIR at a fresh directory so /metrics adds up every
worker's figures (gauges as `livesum`: the workers alive now).

Who increments what:
* service/api/edge.py: requests by operation (count, errors, latency, in progress), moves, open
  streams, rate-limit and overload refusals, slow bodies.
* service/api/admission.py: the time requests waited in the admission queue.
* service/store/pool.py: pool waits.
* service/usecases/retry.py: append conflicts (each stream version conflict, before its retry).
* service/usecases/clock.py: timer lateness (each fired timer: now − deadline).
* service/api/app.py: games running, read from the lobby every few seconds.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Requests by operation, as Litestar's PrometheusConfig middleware named and labelled them (it
# recorded them until issue 28; the edge layer does now, from what it already knows: one
# middleware fewer on every request, measured in docs/benchmarks-history.md).
HTTP_LABELS = ("method", "path", "status_code", "app_name", "operation")
HTTP_REQUESTS = Counter("swarm_http_requests_total", "Total requests", HTTP_LABELS)
HTTP_ERRORS = Counter(
    "swarm_http_requests_error_total", "Total errors (5xx) in requests", HTTP_LABELS
)
HTTP_DURATION = Histogram(
    "swarm_http_request_duration_seconds", "Request duration, in seconds", HTTP_LABELS
)
HTTP_IN_PROGRESS = Gauge(
    "swarm_http_requests_in_progress",
    "Requests admitted and being handled now (streams apart)",
    multiprocess_mode="livesum",
)
MOVES = Counter("swarm_moves_total", "Moves accepted (submitMove answered 2xx)")
OPEN_STREAMS = Gauge(
    "swarm_open_streams", "Server-Sent Events streams open now", multiprocess_mode="livesum"
)
GAMES_RUNNING = Gauge(
    "swarm_games_running",
    "Games being played, database-wide (from the lobby, refreshed every few seconds)",
    multiprocess_mode="mostrecent",
)
TIMER_LATENESS = Histogram(
    "swarm_timer_lateness_seconds",
    "How long after its deadline each turn timer fired",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
POOL_WAIT = Histogram(
    "swarm_pool_wait_seconds",
    "Time spent waiting for a free database connection",
    buckets=(0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 3.0),
)
POOL_EXHAUSTED = Counter(
    "swarm_pool_exhausted_total", "Waits for a connection that ran out of time (503 overloaded)"
)
APPEND_CONFLICTS = Counter(
    "swarm_append_conflicts_total",
    "Appends refused because the stream moved on (each is retried or answered 409)",
)
RATE_LIMITED = Counter("swarm_rate_limited_total", "Requests refused with 429 by the rate limit")
OVERLOADED = Counter(
    "swarm_overloaded_total", "Requests refused with 503 because too much work was in flight"
)
SHED = Counter(
    "swarm_admission_shed_total",
    "Requests refused with 503 at admission, before any work (kind: move, other, new)",
    ["kind"],
)
ADMISSION_WAIT = Histogram(
    "swarm_admission_wait_seconds",
    "Time a request waited in the admission queue (admitted or shed)",
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25),
)
LOOP_LAG = Histogram(
    "swarm_loop_lag_seconds",
    "How late the event loop ran a probe scheduled every 10 ms while requests come (admission)",
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
ADMISSION_LIMIT = Gauge(
    "swarm_admission_limit",
    "Requests this process admits at once now: the in-flight limit, lowered while its loop is late",
    multiprocess_mode="liveall",
)
SLOW_CLIENTS = Counter(
    "swarm_slow_client_total", "Requests dropped because the body did not arrive in time"
)
SLOW_READERS = Counter(
    "swarm_slow_reader_total",
    "Streams and exports dropped because the client took none of their bytes in time",
)
