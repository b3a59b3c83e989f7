"""Start-up recovery (`pairank migrate`, `pairank worker`): fail only jobs whose worker is gone.

A job is running while its worker renews its lease; one whose lease has expired was left by a worker
that died. Jobs that other live workers or replicas are running have fresh leases and are left alone.
"""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from app.control.worker import fail_expired


def recover_interrupted_work(sessions: sessionmaker[Session]) -> list[str]:
    """Fail running jobs whose lease expired (and their evaluations); returns their ids."""
    return fail_expired(sessions)
