-- 0018: skill ratings (issue 43; service/domain/ratings.py). Each person's rating, folded from
-- the `rating_changed` events of their `player-<id>` stream, beside their stats: what profiles,
-- the leaderboard by rating and the lobby's average rating read. A person with no rated game
-- keeps the model's start (mu 25, sigma 25/3) and rated_games 0.
alter table player_stats
    add column rating_mu    double precision not null default 25,
    add column rating_sigma double precision not null default 8.333333333333334,
    add column rated_games  integer          not null default 0;

-- The leaderboard by rating: people with a rated game, settled ratings (sigma under
-- ratings.PROVISIONAL_SIGMA) before provisional ones, then by mu.
create index player_stats_by_rating on player_stats
    ((rating_sigma < 6) desc, rating_mu desc, player_id) where rated_games > 0;
