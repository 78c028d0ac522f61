"""Command line: ``python -m service run|migrate|documents|audit``."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from service.store.database import provide_database_url
from service.store.migrate import migrate


def _database_url() -> str:
    url = provide_database_url()
    applied = migrate(url)
    if applied:
        logging.getLogger("service").info("applied migrations: %s", ", ".join(applied))
    return url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service", description="Swarm game server")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", help="serve the HTTP API (embedded PostgreSQL if no DATABASE_URL)"
    )
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8000)
    commands.add_parser("migrate", help="apply database migrations and exit")
    commands.add_parser(
        "documents", help="write openapi/openapi.json and schemas/*.json from the code"
    )
    audit = commands.add_parser(
        "audit", help="audit an exported game (file or URL): fair deal, hash chain, replay"
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

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "migrate":
        _database_url()
        return 0

    import uvicorn

    # The app factory reads DATABASE_URL; the embedded server (if any) lives in this process.
    os.environ["DATABASE_URL"] = _database_url()
    uvicorn.run("service.api.app:create_app", factory=True, host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
