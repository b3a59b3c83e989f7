"""Checks of the configured request limits (413 when exceeded, naming the field and the limit)."""

from __future__ import annotations

from collections.abc import Sequence, Sized

from app.config import Settings
from app.core.errors import LimitExceededError


def check_count(field: str, items: Sized, limit: int, unit: str = "items") -> None:
    """Raise LimitExceededError when a list is longer than the limit."""
    if len(items) > limit:
        raise LimitExceededError(field, limit, len(items), unit)


def check_text(settings: Settings, field: str, text: str) -> None:
    """Raise LimitExceededError when a text is longer than the character limit."""
    if len(text) > settings.max_text_chars:
        raise LimitExceededError(field, settings.max_text_chars, len(text), "characters")


def check_texts(settings: Settings, field: str, texts: Sequence[str]) -> None:
    """Check every text of a list, naming the offending position in the field."""
    for position, text in enumerate(texts):
        check_text(settings, f"{field}[{position}]", text)
