-- 0014: the bearer-token check inside a move's append (service/store/events.py `guard`,
-- service/usecases/identity.py `TokenCheck`).
--
-- A move whose caller this instance has authenticated before is appended with this check in
-- the same statement: the token must still be unrevoked and unexpired (at the service's clock,
-- `p_at`) and belong to the player who moves, or the statement fails (nothing of it is kept)
-- with SQLSTATE SWGRD. So the check is exactly as strict as a separate query before the
-- append (a logout committed before the append's statement began is seen; one committed after
-- is after the move either way), and costs no round trip of its own. STABLE, SECURITY INVOKER:
-- it only reads access_tokens, which swarm_app may SELECT.

create function require_token(p_hash bytea, p_player text, p_at timestamptz) returns boolean
language plpgsql
stable
as $$
begin
    perform 1
       from access_tokens
      where token_hash = p_hash
        and player_id = p_player
        and revoked_at is null
        and (expires_at is null or expires_at > p_at);
    if not found then
        raise exception 'the bearer token is not known, has expired or was revoked'
            using errcode = 'SWGRD';
    end if;
    return true;
end;
$$;

grant execute on function require_token(bytea, text, timestamptz) to swarm_app;
