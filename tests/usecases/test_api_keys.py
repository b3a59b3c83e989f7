"""API keys as a use case, on both databases: hashing, scopes, corpus limits, revocation, bootstrap."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from app.core.errors import InvalidInputError, NotFoundError
from app.usecases.api_keys import ApiKeyService, new_key_text


def test_only_a_salted_hash_is_stored(sessions: sessionmaker[Session]) -> None:
    info, key = ApiKeyService(sessions).create("write", ["claims"], "bot")
    secret = key.split("_", 2)[2]
    assert key.startswith(f"prk_{info.id}_") and len(secret) == 43
    with sessions() as session:
        row = session.execute(text("SELECT * FROM api_keys")).mappings().one()
    stored = " ".join(str(value) for value in row.values())
    assert secret not in stored and key not in stored
    assert row["key_hash"] == hashlib.sha256(f"{row['salt']}:{secret}".encode()).hexdigest()
    # Two keys never share a salt: equal secrets would still hash differently.
    other, _ = ApiKeyService(sessions).create("read")
    with sessions() as session:
        salts = session.execute(text("SELECT salt FROM api_keys")).scalars().all()
    assert len(set(salts)) == 2 and other.id != info.id


def test_verify_scopes_and_corpora(sessions: sessionmaker[Session]) -> None:
    service = ApiKeyService(sessions)
    _, key = service.create("write", ["claims"])
    principal = service.verify(key)
    assert principal is not None
    assert principal.allows("read") and principal.allows("write") and not principal.allows("admin")
    assert principal.allows_corpus("claims") and not principal.allows_corpus("answers")
    wrong_secret = key[:-1] + ("A" if key[-1] != "A" else "B")
    for presented in (wrong_secret, key + "x", "prk_000000000000_" + "a" * 43, "not-a-key", ""):
        assert service.verify(presented) is None


def test_revocation_is_immediate_and_listed(sessions: sessionmaker[Session]) -> None:
    service = ApiKeyService(sessions)
    info, key = service.create("read")
    assert service.verify(key) is not None
    assert service.revoke(info.id).revoked_at is not None
    assert service.verify(key) is None
    assert [k.revoked_at is not None for k in service.list()] == [True]
    with pytest.raises(NotFoundError):
        service.revoke("ffffffffffff")


def test_bad_scope_is_refused(sessions: sessionmaker[Session]) -> None:
    with pytest.raises(InvalidInputError) as refused:
        ApiKeyService(sessions).create("root")
    assert refused.value.field == "scope"


def test_bootstrap_admin_only_when_no_admin_key_is_active(sessions: sessionmaker[Session]) -> None:
    service = ApiKeyService(sessions)
    first = new_key_text()
    assert service.bootstrap_admin(first)
    assert not service.bootstrap_admin(first)  # every later start: already there
    principal = service.verify(first)
    assert principal is not None and principal.scope == "admin"
    # Revoked, the bootstrap key is never revived by the variable still being set.
    service.revoke(principal.id or "")
    assert not service.bootstrap_admin(first)
    assert service.verify(first) is None
    # A different key bootstraps again when no admin key is active (the operator's recovery path).
    second = new_key_text()
    assert service.bootstrap_admin(second) and service.verify(second) is not None
    with pytest.raises(ValueError, match="PAIRANK_BOOTSTRAP_ADMIN_KEY"):
        service.bootstrap_admin("too-short")
