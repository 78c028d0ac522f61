-- 0016: Idempotency-Key on the POSTs that create something or spend an allowance (issue 27,
-- service/store/idempotency.py, service/api/idempotency.py).
--
-- One row per key a caller sent, for 24 hours. Nothing in it is readable without the client's
-- key: `lookup` and `fingerprint` are HMACs under keys derived (HKDF) from the Idempotency-Key
-- and the caller's scope (its bearer token's hash, or its address), and `answer` (a stored
-- answer may hold a bearer token: createGuest, register, login) is AES-256-GCM under another
-- key derived from the same. A row without an answer is a request still in progress.

create table idempotency_keys (
    lookup      bytea       primary key,  -- HMAC(derived key, "lookup"): 32 bytes
    fingerprint bytea       not null,     -- HMAC(derived key, method, path, canonical body)
    started_at  timestamptz not null,
    expires_at  timestamptz not null,     -- started_at + 24 h: swept after it
    answer      bytea                     -- nonce ‖ AES-GCM(status, headers, body); null: running
);
create index idempotency_keys_expiry on idempotency_keys (expires_at);
grant select, insert, update, delete on idempotency_keys to swarm_app;
