"""The change hash of a document's text (the documents table's `text_sha256` column)."""

from __future__ import annotations

import hashlib


def text_sha256(text: str) -> str:
    """Hash of a text, used to tell whether a document's stored vector is still valid."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
