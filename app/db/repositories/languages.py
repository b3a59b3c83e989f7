"""Documents' own languages: what a `multi` corpus's lexical index and same-language filters read."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.db.models import Corpus, Document


class DocumentLanguages:
    """The `language` column of one corpus's documents."""

    def __init__(self, session: Session, corpus: Corpus) -> None:
        self.session = session
        self.corpus = corpus

    def page_lexical(self, after: int, limit: int) -> list[tuple[int, str, str | None]]:
        """Up to `limit` (database id, text, own language) of the corpus with ids above `after`, in order."""
        rows = self.session.execute(
            select(Document.id, Document.text, Document.language)
            .where(Document.corpus_id == self.corpus.id, Document.id > after)
            .order_by(Document.id)
            .limit(limit)
        ).all()
        return [(int(pk), str(text), language) for pk, text, language in rows]

    def of(self, ids: Sequence[int]) -> dict[int, str | None]:
        """Database id -> own language of the given documents (missing ids are absent)."""
        found: dict[int, str | None] = {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        for start in range(0, len(unique), 500):
            rows = self.session.execute(
                select(Document.id, Document.language).where(
                    Document.corpus_id == self.corpus.id, Document.id.in_(unique[start : start + 500])
                )
            )
            found.update((int(pk), language) for pk, language in rows)
        return found

    def without(self, after: int, limit: int) -> list[tuple[int, str]]:
        """Up to `limit` (database id, text) of documents with no language and an id above `after`."""
        rows = self.session.execute(
            select(Document.id, Document.text)
            .where(Document.corpus_id == self.corpus.id, Document.id > after, Document.language.is_(None))
            .order_by(Document.id)
            .limit(limit)
        )
        return [(int(pk), str(text)) for pk, text in rows]

    def set(self, languages: dict[int, str | None]) -> None:
        """Store documents' own languages (no change is logged: the same detection as the index's)."""
        for pk, language in languages.items():
            self.session.execute(
                update(Document)
                .where(Document.corpus_id == self.corpus.id, Document.id == pk)
                .values(language=language)
            )

    def clear(self) -> None:
        """Forget every document's own language: the corpus is now of one language."""
        self.session.execute(
            update(Document)
            .where(Document.corpus_id == self.corpus.id, Document.language.is_not(None))
            .values(language=None)
        )
