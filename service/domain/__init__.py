"""The pure domain: the game rules, tables, the coin ledger, the fair deal, the hash chain, the
views and the offline audit. Nothing here does I/O, reads a clock or draws randomness of its
own: time and seeds come in as data, so every fold and every replay is exact."""
