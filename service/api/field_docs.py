"""Descriptions for the API document of structs whose own docstrings and comments do not say
everything a client needs (service.api.openapi reads docstrings and field comments first; these
fill the gaps). Kept in one place while other branches edit those modules; move each into its
struct's docstring (`Attributes:`) when convenient.
"""

from __future__ import annotations

# Properties that mean the same wherever they appear.
GENERIC: dict[str, str] = {
    "game_id": "The game's id.",
    "table_id": "The table's id.",
    "player_id": "The player's id (null for a bee player, where allowed).",
    "seat": "A seat number, from 1.",
    "bee": "A bee's number.",
    "stem": "A stem number, 1 to 4.",
    "name": "The name shown to others.",
    "kind": "`person` or `bee` (a bee player, played by the server).",
    "commitment": "SHA-256 of the server's secret seed for the game, lowercase hex, published "
    "before any seed is contributed (docs/fairness.md).",
    "scheme": "The version of the fair-deal scheme (docs/fairness.md).",
    "limit": "The page size asked for.",
    "offset": "How many entries come before this page.",
    "xp": "Experience points from online games.",
    "games_won": "Online games won (a shared win counts).",
    "games_played": "Online games finished.",
    "registered": "The player has an account (not only a guest).",
    "turn": "The turn, 1 to 10.",
    "deadline": "When the clock runs out (UTC); null when untimed.",
    "taken": "The bees taken, bottom of the stem first.",
    "reason": "Why.",
    "move_id": "Your id for this move, 1 to 64 characters, unique per player per game (a "
    "UUID is a good choice): the move's idempotency key. The same move sent again with the "
    "same `move_id` is applied once and answered the same, with `Idempotent-Replayed: true`; "
    "a different move with it is refused (`move-id-reused`).",
    "password": "The account's password.",
    "token": "Your bearer token: send it as `Authorization: Bearer <token>`.",
    "stake": "Coins each person puts in; 0 for a free table.",
    "capacity": "How many seats the table has, 2 to 8.",
    "status": "The status.",
}

SCHEMA_DOCS: dict[str, str] = {
    "Liveness": "The process is up.",
    "Readiness": "Whether this instance can serve: its database answers and every migration "
    "it expects is applied.",
    "Badge": "A badge earned in online games.",
    "Coins": "A player's coins.",
    "GuestIn": "A new guest.",
    "GuestOut": "A new guest and its bearer token.",
    "Health": "The service is up and its database answers.",
    "LeaderboardEntry": "One ranked player.",
    "LeaderboardPage": "A page of the leaderboard.",
    "LobbyEntry": "An open online table, as the lobby lists it.",
    "LobbyPage": "A page of the lobby, newest tables first.",
    "LoginIn": "An account's name and password.",
    "RegisterIn": "A new account's name and password.",
    "SessionOut": "A logged-in session: who you are and your new bearer token.",
    "SoloTableIn": "A solo table against bee players.",
    "TableIn": "A new online table.",
    "TableView": "A table as the caller sees it, with their view of its current game.",
    "NextGame": "The table's next game, prepared when the last one ended.",
    "Tap": "Tap a bee: your saved, changeable choice for this turn (hidden from others). When "
    "the turn clock runs out, the tapped bee flies.",
    "Confirm": "Confirm your pick for this turn (final). Without `bee`, the bee you tapped.",
    "ChooseStem": "Your bee is too low: take every bee of this stem (and their stings); your "
    "bee starts it again.",
    "Pick": "A revealed pick.",
    "Stake": "Coins put in or paid out, for one player.",
    "TurnStarted": "A turn began.",
    "TableOpened": "Someone opened the table.",
    "SeatTaken": "A person or a bee player sat down.",
    "SeatFreed": "A person left the table.",
    "HostChanged": "The table has a new host.",
    "GameFinished": "The table's current game ended.",
    "GameExport": "A whole ended game, for anyone to audit offline (docs/fairness.md).",
    "PublicProfile": "Anyone's public profile (never their coins).",
    "Verification": "The server's verification of an ended game, step by step.",
    "VerificationStep": "One step of the verification.",
    "VerificationCheck": "One check of the fairness step.",
}

FIELD_DOCS: dict[str, dict[str, str]] = {
    "Readiness": {
        "database": "`ok` when the database answered.",
        "migrations": "`ok` when every migration this version expects is applied.",
    },
    "SeedCommitmentIn": {
        "seed_hash": 'SHA-256(encode("swarm/seed/v1", game_id, your player_id, seed)), '
        "lowercase hex: your seed's commitment.",
    },
    "SeedCommitted": {"seed_hash": "The seed's commitment hash, lowercase hex."},
    "TableRecord": {
        "prev_hash": "The hash of the table event before the first one here (64 zeros when the "
        "first is version 1).",
        "events": "The table's events for this game, `game_prepared` first, `game_opened` last.",
    },
    "Badge": {"name": "The badge's name.", "description": "What earned it."},
    "Coins": {
        "balance": "Spendable coins.",
        "held": "Coins held for buy-in tables whose game has not started yet.",
    },
    "BeeLanded": {
        "seat": "Whose bee it was.",
        "bee": "The bee that landed.",
        "stem": "The stem it landed on.",
        "taken": "The 5 bees it took as the sixth bee; empty otherwise.",
    },
    "ClockSettings": {
        "turn_seconds": "Seconds to pick a bee each turn.",
        "choice_seconds": "Seconds to choose a stem when your bee is too low.",
    },
    "Tap": {"bee": "The bee from your hand."},
    "Confirm": {"bee": "The bee from your hand; leave it out to confirm the one you tapped."},
    "ChooseStem": {"stem": "The stem to take, 1 to 4."},
    "DealCommitted": {},
    "DealProof": {
        "client_seeds": "Each seat's seed in seat order (lowercase hex), null for a seat that "
        "gave none (every bee player).",
        "transcript": "SHA-256 of everything the deck is drawn from, lowercase hex.",
        "fingerprint": "SHA-256 of the deal (hands and stems), lowercase hex.",
    },
    "DealRevealed": {
        "server_seed": "The server's secret seed, lowercase hex: its SHA-256 is the commitment.",
        "deck_order": "The deck in the order it was dealt.",
    },
    "ExportedEvent": {
        "version": "Its position in the game's log, from 1.",
        "type": "The event's type.",
        "recorded_at": "When it was recorded (UTC).",
        "hash": "Its hash-chain link, lowercase hex.",
        "data": "The event exactly as stored, with its `type` tag.",
    },
    "FairnessRecord": {
        "client_seeds": "Each seat's seed in seat order, null for none.",
        "transcript": "SHA-256 of what the deck is drawn from, lowercase hex.",
        "fingerprint": "SHA-256 of the deal, lowercase hex.",
        "server_seed": "The server's secret seed, lowercase hex.",
        "deck_order": "The deck in the order it was dealt.",
        "hands": "Each seat's hand as dealt, seat 1 first.",
        "stems": "The 4 bees that started the stems.",
    },
    "GameEnded": {
        "stings": "Final stings by seat, index 0 is seat 1.",
        "winners": "The winning seats (they share the win); empty when abandoned.",
        "reason": "`finished`, `last_person_standing` or `abandoned`.",
    },
    "GameExport": {
        "format": "The export format's name and version.",
        "events": "Every event of the game, in order, each with its hash-chain link.",
        "fairness": "The published deal.",
        "table": "The table's events for this game with their chain links; null in exports "
        "made before they were included.",
    },
    "GameFinished": {"reason": "How the game ended."},
    "GameOpened": {},
    "GamePrepared": {},
    "GuestOut": {"player_id": "Your player id.", "name": "Your name."},
    "Health": {"status": "`ok`.", "database": "`ok` when the database answered."},
    "HostChanged": {"host": "The new host's player id."},
    "LeaderboardEntry": {"rank": "1 is first."},
    "LeaderboardPage": {
        "by": "`wins` or `xp`: what the ranking is by.",
        "entries": "The ranked players of this page.",
        "next_offset": "The offset of the next page; null on the last page.",
    },
    "LobbyEntry": {
        "host_name": "The host's name.",
        "seats_taken": "Seats taken (people and bee players).",
        "people": "People seated.",
        "status": "`open`, `playing` or `between_games`.",
        "opened_at": "When the table opened (UTC).",
    },
    "LobbyPage": {
        "tables": "The tables of this page.",
        "next_offset": "The offset of the next page; null on the last page.",
    },
    "LoginIn": {"name": "The account's name (case-insensitive)."},
    "RegisterIn": {"name": "The account's name: unique among accounts, case-insensitively."},
    "NextGame": {"game_id": "The next game's id.", "seeds": "How many seeds were contributed."},
    "OptionalSeedIn": {"client_seed": "Your seed for the next game: 0 to 64 bytes, lowercase hex."},
    "FillWithBeesIn": {
        "client_seed": "Your seed for the game the bees start: 0 to 64 bytes, lowercase hex."
    },
    "SeedIn": {"client_seed": "Your seed for the next game: 0 to 64 bytes, lowercase hex."},
    "Pick": {"seat": "Whose pick.", "bee": "The bee picked."},
    "PicksRevealed": {"picks": "Every pick, lowest first: the order they fly in."},
    "PotFormed": {"stakes": "What each person put into the pot."},
    "BuyInHeld": {
        "player_id": "Whose stake.",
        "hold_id": "The hold in their wallet (its `stake_held` names the same id).",
        "amount": "The stake, in coins: the table's buy-in.",
    },
    "BuyInReturned": {
        "player_id": "Whose stake.",
        "hold_id": "The hold in their wallet that is released.",
        "amount": "The stake, in coins.",
        "reason": "`left` (they left before the first deal) or `not_taken` (the table never "
        "seated them with it).",
    },
    "PotSettled": {
        "payouts": "What each player got.",
        "reason": "`won` (to the winners) or `refund` (the game was abandoned).",
    },
    "Profile": {"coins": "Your coins: spendable and held."},
    "PublicProfile": {},
    "SeatFreed": {"player_id": "Who left."},
    "SeatInfo": {"player_id": "The person's player id; null for a bee player."},
    "SeatLeft": {"seat": "The seat that left."},
    "SeatTaken": {},
    "SeedContributed": {
        "player_id": "Who contributed it.",
        "seed": "The seed, lowercase hex.",
    },
    "SessionOut": {"player_id": "Your player id.", "name": "Your name."},
    "SoloTableIn": {"players": "Players at the table, you included: 2 to 8 (4 by default)."},
    "Stake": {"amount": "Coins."},
    "StemChoiceRequired": {"seat": "Whose bee is too low.", "bee": "The too-low bee."},
    "StemTaken": {
        "seat": "Whose bee took it.",
        "bee": "The too-low bee, now alone on the stem.",
        "stem": "The stem taken.",
        "taken": "Every bee the stem held.",
        "chosen_by": "`player`, `rule` (a bee player's or a leaver's bee: the cheapest) or "
        "`clock` (the choice clock ran out, or the clock played the lowest bee).",
    },
    "TableIn": {
        "seats": "Seats at the table: 2 to 8 (4 by default).",
        "stake": "Coins each person puts in (an account is needed); 0, the default, for a "
        "free table.",
        "turn_seconds": "Seconds to pick each turn (20 by default).",
        "choice_seconds": "Seconds to choose a stem when too low (10 by default).",
    },
    "TableOpened": {
        "mode": "`solo` or `online`.",
        "host": "The host's player id.",
        "seats": "Solo: every seat; online: the host alone.",
    },
    "TableView": {
        "mode": "`solo` or `online`.",
        "host": "The host's player id.",
        "seats": "Who sits where, seat 1 first.",
        "you": "Your seat, if you sit at the table.",
    },
    "TurnStarted": {},
    "Verification": {
        "ok": "Every step passed.",
        "steps": "The steps in order: format, commitment, fairness, chain, replay, result.",
    },
    "VerificationCheck": {"name": "The check.", "reason": "What was checked, or why it failed."},
    "VerificationStep": {"reason": "What was checked, or why it failed."},
}
