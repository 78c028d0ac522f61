"""The rule for imports between the layers (docs/architecture.md), read from the source.

domain (pure) <- usecases <- entry points (api, cli, bootstrap); adapters (store) sit beside
the domain and are used by the use cases. An arrow points from what imports to what it may
import; nothing imports against an arrow."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

# What the store's own modules must never import: the layers above it.
_NOT_THE_STORE = ("service.usecases", "service.api", "service.bootstrap", "service.__main__")
# The PostgreSQL store and its driver: the in-memory store, the ports and the log's vocabulary
# stand beside them (after pyeventsourcing's persistence.py, popo.py and postgres.py).
_POSTGRES = (
    "asyncpg",
    "psycopg",
    "service.store.events",
    "service.store.pool",
    "service.store.postgres",
    "service.store.projections",
    "service.store.credentials",
    "service.store.outbox",
    "service.store.reads",
    "service.store.secrets",
    "service.store.timers",
    "service.store.wakeups",
    "service.store.database",
    "service.store.migrate",
    "service.store.citus",
)

# What each layer (a package prefix, or one module) must never import, first match wins.
FORBIDDEN: list[tuple[str, tuple[str, ...]]] = [
    (
        "service.domain",
        (
            # the other layers
            "service.usecases",
            "service.store",
            "service.api",
            "service.bootstrap",
            "service.__main__",
            "service.settings",
            # I/O, clocks of their own, concurrency: the domain is given all of it as data
            "asyncio",
            "asyncpg",
            "psycopg",
            "litestar",
            "httpx",
            "uvicorn",
            "structlog",
            "argon2",
            "socket",
            "subprocess",
            "urllib",
            "http",
            "os",
            "pathlib",
            "time",
            "threading",
        ),
    ),
    # The log's vocabulary and the ports are every store's: neither knows PostgreSQL.
    *(
        (module, (*_NOT_THE_STORE, *_POSTGRES))
        for module in ("service.store.log", "service.store.port", "service.store.memory")
    ),
    ("service.store", _NOT_THE_STORE),
    (
        "service.usecases",
        (
            "service.api",
            "service.bootstrap",
            "service.__main__",
            # no SQL driver: what a use case needs from the database goes through service.store
            "asyncpg",
            "psycopg",
            # ...through its ports (store/port.py) and the log's vocabulary (store/log.py),
            # never the PostgreSQL store itself
            "service.store.events",
            "service.store.pool",
        ),
    ),
    # the entry points: the store translates or classifies its driver's errors (pool.UNAVAILABLE)
    ("service.api", ("asyncpg", "psycopg")),
]


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str) -> Iterator[tuple[int, str]]:
    """Every module `path` imports, absolute, with its line number."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:  # `from service import api` imports service.api
                yield node.lineno, f"{base}.{alias.name}"


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(root: Path, package: str = "service") -> list[str]:
    """`file:line: layer imports forbidden` for every import against the rule, under
    `root/package`."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        module = module_name(root, path)
        rule = next((r for r in FORBIDDEN if _within(module, r[0])), None)
        if rule is None:
            continue
        layer, forbidden = rule
        seen: set[tuple[int, str]] = set()
        for line, imported in imports_of(path, module):
            bad = next((f for f in forbidden if _within(imported, f)), None)
            if bad is not None and (line, bad) not in seen:  # once per import statement
                seen.add((line, bad))
                where = path.relative_to(root)
                found.append(f"{where}:{line}: {layer} imports {imported} (forbidden: {bad})")
    return found


# Modules that must not load a database driver even through another module: the use cases and
# the in-memory store run the fast tier with no driver loaded (`import service.store.memory`
# loaded asyncpg, issue 42).
NO_DRIVER = ("service.usecases", "service.store.memory", "service.store.port", "service.store.log")
DRIVERS = ("asyncpg", "psycopg")


def _graph(root: Path, package: str) -> dict[str, list[str]]:
    """Each module under `root/package` and what it imports (absolute names, as written)."""
    graph = {}
    for path in sorted((root / package).rglob("*.py")):
        module = module_name(root, path)
        graph[module] = [name for _, name in imports_of(path, module)]
    return graph


def _loads(graph: dict[str, list[str]], name: str) -> list[str]:
    """The modules importing `name` loads: the ones of `graph` it names, with their packages."""
    parts = name.split(".")
    return [p for p in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if p in graph]


def driver_paths(root: Path, package: str = "service") -> list[str]:
    """`module -> ... -> driver` for every module of `NO_DRIVER` that loads a driver, directly
    or through other modules of the package (the first path found, shortest first)."""
    graph = _graph(root, package)
    found = []
    for start in sorted(m for m in graph if any(_within(m, p) for p in NO_DRIVER)):
        paths: dict[str, list[str]] = {start: [start]}
        queue = [start]
        while queue:
            module = queue.pop(0)
            for imported in graph[module]:
                driver = next((d for d in DRIVERS if _within(imported, d)), None)
                if driver is not None:
                    found.append(" -> ".join([*paths[module], driver]))
                    queue = []
                    break
                for loaded in _loads(graph, imported):
                    if loaded not in paths:
                        paths[loaded] = [*paths[module], loaded]
                        queue.append(loaded)
    return found


# SQL by its shape, not by a word: a query, a write, a CTE (prose such as "update the lobby"
# or "select a seat" is not SQL).
SQL = re.compile(
    r"\bselect\b[\s\S]*\bfrom\b|\binsert\s+into\b|\bupdate\s+\w+\s+set\b|\bdelete\s+from\b"
    r"|\bwith\s+\w+\s+as\s*\(|\bselect\s+\w+\s*\(",
    re.IGNORECASE,
)
NO_SQL = ("service.usecases",)  # layers whose code holds no SQL text: it lives in service.store


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def sql_texts(root: Path, package: str = "service") -> list[str]:
    """`file:line: SQL in layer: text` for every string literal (f-strings' text included,
    docstrings not) that reads as SQL in a layer of `NO_SQL`."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        module = module_name(root, path)
        layer = next((layer for layer in NO_SQL if _within(module, layer)), None)
        if layer is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                text = "".join(
                    v.value
                    for v in node.values
                    if isinstance(v, ast.Constant) and isinstance(v.value, str)
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) in docstrings:
                    continue
                text = node.value
            else:
                continue
            if SQL.search(text):
                where = path.relative_to(root)
                found.append(
                    f"{where}:{node.lineno}: SQL in {layer}: {' '.join(text.split())[:60]}"
                )
    return found
