"""API keys: create (shown once), list, revoke, and check a presented key's scope and corpora.

A key reads `prk_<id>_<secret>`: the id finds the row, the 256-bit secret is checked against a salted
SHA-256 (the only thing stored) in constant time. A fast hash is enough for random 256-bit secrets (no
dictionary to try), and it keeps the check off the request's latency budget. Scopes nest: `admin`
implies `write`, which implies `read`. A key may be limited to a list of corpora.

Each process remembers a check's outcome for `PAIRANK_KEY_CACHE_SECONDS` (`KeyCache`), so a request
with a key does not read the database: a key revoked through this process is refused at once, one
revoked elsewhere (another worker, `pairank keys revoke`) within that many seconds.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from app.core.errors import InvalidInputError, NotFoundError
from app.db.admin_models import SCOPES, ApiKey
from app.db.engine import transaction
from app.db.models import utcnow
from app.db.repositories.api_keys import ApiKeyRepository

RANK = {scope: position for position, scope in enumerate(SCOPES)}
_FORMAT = re.compile(r"^prk_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$")


@dataclass(frozen=True)
class Principal:
    """Who is calling: a key's id, scope and corpora (`id` None for the configured admin key)."""

    id: str | None
    scope: str
    corpora: frozenset[str] | None
    name: str | None = None

    def allows(self, scope: str) -> bool:
        """True when this principal's scope includes `scope`."""
        return RANK[self.scope] >= RANK[scope]

    def allows_corpus(self, corpus: str) -> bool:
        """True when this principal may touch the corpus."""
        return self.corpora is None or corpus in self.corpora


def _hash(salt: str, secret: str) -> str:
    return hashlib.sha256(f"{salt}:{secret}".encode()).hexdigest()


class KeyCache:
    """Outcomes of key checks (a principal, or None for a refused key) for `seconds`, per process."""

    def __init__(self, seconds: float, max_entries: int = 10_000) -> None:
        self.seconds = seconds
        self.max_entries = max_entries
        self._entries: dict[str, tuple[float, Principal | None]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _slot(presented: str) -> str:
        # The presented key's digest, so that no secret lives on in memory longer than its request.
        return hashlib.sha256(presented.encode()).hexdigest()

    def get(self, presented: str) -> tuple[bool, Principal | None]:
        """(True, outcome) when the key was checked less than `seconds` ago; (False, None) otherwise."""
        if self.seconds <= 0:
            return False, None
        entry = self._entries.get(self._slot(presented))
        if entry is None or entry[0] <= time.monotonic():
            return False, None
        return True, entry[1]

    def put(self, presented: str, principal: Principal | None) -> None:
        """Remember a check's outcome."""
        if self.seconds <= 0:
            return
        with self._lock:
            if len(self._entries) >= self.max_entries:  # many distinct keys (a scan): start over
                self._entries.clear()
            self._entries[self._slot(presented)] = (time.monotonic() + self.seconds, principal)

    def clear(self) -> None:
        """Forget every outcome (a key was created or revoked through this process)."""
        with self._lock:
            self._entries.clear()


class ApiKeyService:
    """Key management and verification over the database (checks remembered in `cache`, if given)."""

    def __init__(self, sessions: sessionmaker[Session], cache: KeyCache | None = None) -> None:
        self.sessions = sessions
        self.cache = cache

    def create(
        self, scope: str, corpora: list[str] | None = None, name: str | None = None, secret: str | None = None
    ) -> tuple[ApiKey, str]:
        """A new key: (its record, the key itself, to show once). `secret` bootstraps a chosen key."""
        if scope not in SCOPES:
            raise InvalidInputError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}", "scope")
        key_id = secrets.token_hex(6)
        secret = secret or secrets.token_urlsafe(32)
        salt = secrets.token_hex(16)
        row = ApiKey(id=key_id, name=name, scope=scope, corpora=sorted(set(corpora)) if corpora else None,
                     salt=salt, key_hash=_hash(salt, secret))  # fmt: skip
        with transaction(self.sessions) as session:
            ApiKeyRepository(session).add(row)
        self._forget()
        return row, f"prk_{key_id}_{secret}"

    def list(self) -> list[ApiKey]:
        """Every key, newest first."""
        with self.sessions() as session:
            return ApiKeyRepository(session).list()

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key: refused from the next request on by this process, by the others within their
        key cache's seconds."""
        with transaction(self.sessions) as session:
            row = ApiKeyRepository(session).get(key_id)
            if row is None:
                raise NotFoundError(f"key {key_id!r} does not exist", field="id")
            row.revoked_at = row.revoked_at or utcnow()
        self._forget()
        return row

    def _forget(self) -> None:
        if self.cache is not None:
            self.cache.clear()

    def verify(self, presented: str) -> Principal | None:
        """The principal of a presented key, or None when it is unknown, malformed or revoked."""
        if self.cache is None:
            return self._verify(presented)
        known, principal = self.cache.get(presented)
        if not known:
            principal = self._verify(presented)
            self.cache.put(presented, principal)
        return principal

    def _verify(self, presented: str) -> Principal | None:
        match = _FORMAT.match(presented)
        if match is None:
            return None
        key_id, secret = match.groups()
        with self.sessions() as session:
            row = ApiKeyRepository(session).get(key_id)
            if row is None or row.revoked_at is not None:
                return None
            if not hmac.compare_digest(row.key_hash, _hash(row.salt, secret)):
                return None
            return Principal(row.id, row.scope, frozenset(row.corpora) if row.corpora else None, row.name)

    def bootstrap_admin(self, key: str) -> bool:
        """Store `key` as an admin key unless an active admin key exists (first start of a deployment)."""
        match = _FORMAT.match(key)
        if match is None:
            raise ValueError(
                "PAIRANK_BOOTSTRAP_ADMIN_KEY must look like prk_<12 hex>_<43 URL-safe characters>"
            )
        key_id, secret = match.groups()
        with self.sessions() as session:
            repository = ApiKeyRepository(session)
            # A revoked bootstrap key stays revoked: the variable is read at every start.
            if repository.count_active_admin() or repository.get(key_id) is not None:
                return False
        salt = secrets.token_hex(16)
        with transaction(self.sessions) as session:
            ApiKeyRepository(session).add(ApiKey(id=key_id, name="bootstrap", scope="admin", corpora=None,
                                                 salt=salt, key_hash=_hash(salt, secret)))  # fmt: skip
        self._forget()
        return True


def new_key_text() -> str:
    """A fresh key in the service's format (for PAIRANK_BOOTSTRAP_ADMIN_KEY and tests)."""
    return f"prk_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"
