"""On Citus a migration file runs one statement at a time (`migrate.split_statements`): the
cut is at top-level semicolons only, and every file cuts into statements that put back
together are the file."""

from __future__ import annotations

from service.store.migrate import migration_files, split_statements


def test_statements_are_cut_at_top_level_semicolons_only() -> None:
    sql = (
        "select 'a;b', \"c;d\", $$x;y$$, $t$ $$ ; $t$; -- a comment; with a semicolon\n"
        "select E'\\';' ; /* a ; /* nested ; */ comment */ select 1;\n-- only a comment;\n"
    )
    assert [s.strip() for s in split_statements(sql)] == [
        "select 'a;b', \"c;d\", $$x;y$$, $t$ $$ ; $t$;",
        "-- a comment; with a semicolon\nselect E'\\';' ;",
        "/* a ; /* nested ; */ comment */ select 1;",
    ]


def test_every_migration_cuts_into_statements_that_make_up_the_file() -> None:
    for path in migration_files():
        sql = path.read_text(encoding="utf-8")
        parts = split_statements(sql)
        assert parts, path.name
        assert "".join(parts).strip() in sql, path.name
        assert all(part.rstrip().endswith(";") for part in parts), path.name
