"""Use cases, one module per capability. Each loads state through the `Repository`, asks the
pure domain (`service.domain`) to decide, and commits what was decided through one
`UnitOfWork` (several streams appended atomically, with their projection rows and timers).

| module | capability |
|---|---|
| `identity` | guests, bearer tokens, who the caller is |
| `accounts` | register, log in, log out |
| `profiles` | profiles, coins on show, the leaderboard |
| `tables` | tables and seats: open, join, start, fill with bees, play again, leave, the lobby |
| `deals` | each game's fair deal: commit before seeds, deal, reveal at the end |
| `money` | buy-ins held, pots formed and paid, rewards for finishing |
| `play` | a person's moves in a game, and the bee players' answers |
| `clock` | the turn clock: durable timers fired exactly once |
| `streams` | a game's or a table's log as one caller may see it, paged or live |
| `exports` | a finished game's export and the server's own audit of it |
| `watching` | who may follow a game: seats, spectators, stream tickets |
| `my_games` | the tables and games a caller sits at (`MyGamesQuery`) |

Shared plumbing: `bee_threads` (where the bee players think: a level that thinks long, off
the event loop),
`context` (what every use case is given), `repository` (loading state),
`unit_of_work` (writing it), `retry` (deciding again when someone else wrote first), `errors`.
"""
