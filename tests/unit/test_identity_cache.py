"""Issue 44, item 13: memory per made-up token. The rate limit remembers whose each bearer
token is (`service.api.limits.Identities`); it kept every token's full text, made-up ones too,
in one cache of 10,000: about 420 bytes of server memory stayed per distinct garbage token, and
a flood of them pushed real players' entries out. Now a token is kept by its SHA-256 and the
ones found not valid in a small cache of their own: 100,000 distinct garbage tokens leave
memory flat, and a real player stays remembered through them."""

from __future__ import annotations

import asyncio
import gc
import secrets
import tracemalloc

import pytest

from service.api import limits
from service.api.limits import MAX_UNKNOWN, Identities


@pytest.mark.slow
def test_a_flood_of_made_up_tokens_leaves_memory_flat_and_real_players_remembered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(limits, "IDENTITY_TTL", 3600.0)  # however slow this machine is today
    lookups = [0]  # how many (a count: keeping the tokens would be the test's own memory)

    async def lookup(token: str) -> str | None:
        lookups[0] += 1
        return "player-ada" if token == "ada-token" else None

    async def flood() -> None:
        identities = Identities(lookup)
        tracemalloc.start()  # from the start: what is freed later was traced when made
        assert await identities.player_of("ada-token") == "player-ada"

        async def garbage(count: int) -> None:
            for _ in range(count):
                # long, as a client may send them: the token's own text is never kept
                assert await identities.player_of(secrets.token_hex(200)) is None

        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        await garbage(10_000)
        gc.collect()
        at_10k = tracemalloc.get_traced_memory()[0]
        await garbage(90_000)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        # What a flood leaves is bounded (the 1,000 refused tokens' hashes, about 200 kB), and
        # flat: 90,000 tokens more add nothing (before: 420 bytes each, up to 10,000 kept).
        assert at_10k - before < 400 * 1024, (before, at_10k)
        assert after - at_10k < 16 * 1024, (at_10k, after)
        # Ada's entry outlived the flood: no lookup for her again.
        seen = lookups[0]
        assert await identities.player_of("ada-token") == "player-ada"
        assert lookups[0] == seen
        assert len(identities._unknown) == MAX_UNKNOWN

    asyncio.run(flood())


def test_a_made_up_token_seen_again_soon_costs_no_lookup() -> None:
    lookups: list[str] = []

    async def lookup(token: str) -> str | None:
        lookups.append(token)
        return None

    async def twice() -> None:
        identities = Identities(lookup)
        assert await identities.player_of("nope") is None
        assert await identities.player_of("nope") is None

    asyncio.run(twice())
    assert lookups == ["nope"]
