"""Command line: ``swarm serve|migrate|documents|audit|ratings`` (or ``python -m service …``).

Configuration comes from the environment, read once into `service.settings.Settings` (the
README's configuration table); `--host`, `--port` and `--workers` override it.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from service.settings import Settings, SettingsError


def _database_url(settings: Settings) -> str:
    from service.store.database import provide_database_url
    from service.store.migrate import migrate

    url = provide_database_url(settings.database_url, data_dir=settings.data_dir)
    applied = migrate(url)
    if applied:
        logging.getLogger("service").info("applied migrations: %s", ", ".join(applied))
    return url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="swarm", description="Swarm game server")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("serve", "run"):  # `run`: the name older scripts and the fault tests use
        serve = commands.add_parser(
            name,
            help="serve the HTTP API (embedded PostgreSQL if no DATABASE_URL)"
            if name == "serve"
            else "the same as serve",
        )
        serve.add_argument("--host", help="bind address (SWARM_HOST, default 127.0.0.1)")
        serve.add_argument("--port", type=int, help="TCP port (SWARM_PORT, default 8000)")
        serve.add_argument("--workers", type=int, help="processes (SWARM_WORKERS, default 1)")
    commands.add_parser("migrate", help="apply database migrations and exit")
    commands.add_parser(
        "documents", help="write openapi/openapi.json and schemas/*.json from the code"
    )
    audit = commands.add_parser(
        "audit", help="audit an exported game (file or URL): fair deal, hash chain, replay"
    )
    commands.add_parser(
        "ratings",
        help="recompute every rating from the log and check it against the stored one",
    )
    from service import cli_audit

    cli_audit.add_arguments(audit)
    args = parser.parse_args(argv)

    if args.command == "audit":
        return cli_audit.run(args)

    if args.command == "documents":
        from service.api.documents import write_documents

        for path in write_documents():
            print(f"wrote {path}")
        return 0

    try:
        settings = Settings.from_env(
            host=getattr(args, "host", None),
            port=getattr(args, "port", None),
            workers=getattr(args, "workers", None),
        )
    except SettingsError as exc:
        print(f"swarm: {exc}", file=sys.stderr)
        return 2

    from service.logs import configure_logging
    from service.serve import serve_http

    configure_logging(settings.log_level)
    import psycopg

    from service.store.database import NoDatabase
    from service.store.migrate import MigrationError

    try:
        url = _database_url(settings)
    except (NoDatabase, MigrationError, psycopg.OperationalError) as exc:
        print(f"swarm: {exc}".rstrip(), file=sys.stderr)
        return 1
    if args.command == "migrate":
        return 0
    if args.command == "ratings":
        from service import cli_ratings

        return cli_ratings.run(url)

    # The app factory (in each worker) reads its settings from the environment: pass on the
    # URL of the embedded server, which lives in this process and stops when it exits.
    os.environ["DATABASE_URL"] = url
    return serve_http(settings.with_(database_url=url))


def _version() -> str:
    from service import __version__

    return f"swarm {__version__}"


if __name__ == "__main__":
    sys.exit(main())
