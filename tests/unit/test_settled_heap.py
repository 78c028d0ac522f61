"""`swarm serve` settles its heap once the app has started (service/serve.py, `settle_heap`):
the app's own objects frozen out of every later collection, the collector's thresholds
raised (issue 28: full collections stopped the loop for up to a second under load)."""

from __future__ import annotations

import gc

from service import serve
from service.settings import Settings


def test_swarm_serve_settles_the_heap_once_started() -> None:
    app = serve.serving_app()
    assert serve.settle_heap in app.on_startup
    before = gc.get_threshold()
    try:
        serve.settle_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == serve.GC_THRESHOLDS
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_uvicorn_runs_the_settled_app() -> None:
    config = serve.uvicorn_config(Settings(database_url="postgresql://unused"))
    assert config.app == "service.serve:serving_app" and config.factory
