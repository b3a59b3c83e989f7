"""Changing a corpus's language: a background job that re-analyses its lexical index; queries go on.

`PUT /v1/corpora/{name}/language` queues it. The job (any worker) detects the language of every
document that has none when the new language is `multi`, builds the lexical index in the new language
beside the one serving and saves it, then switches the corpus's language in one short transaction under
the corpus's lock (detecting the few documents written meanwhile, or clearing every document's own
language when the corpus becomes one of a single language). Every process serving the corpus sees the
new language at its next sync, loads the saved index, replays the log after it and swaps it in
(app/stores/lexical_store.py); until then it answers with the previous language's index, queries
analysed in that language. One change of language per corpus runs at a time.
"""

from __future__ import annotations

import logging
import uuid

from sqlalchemy.orm import Session, sessionmaker

from app.control import job_kinds
from app.control.job_context import JobContext, Outcome
from app.core.errors import ConflictError
from app.db.admin_models import Job
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.repositories.jobs import JobRepository
from app.db.repositories.languages import DocumentLanguages
from app.serving.context import ServiceContext
from app.stores.lexical_store import build_lexical, catch_up_lexical, save_lexical
from indexes.analysis import Analyser
from indexes.languages import MULTI, detect

log = logging.getLogger(__name__)
KIND = job_kinds.LANGUAGE
DETECT_BATCH = 500


def _slot(corpus_id: int) -> str:
    return f"language:{corpus_id}"


def submit_language_change(sessions: sessionmaker[Session], name: str, language: str) -> Job:
    """Queue the change of a corpus's language (404 no such corpus, 409 one already under way)."""
    with transaction(sessions) as session:
        corpus = require_corpus(session, name)
        repository = JobRepository(session)
        holder = repository.slot_holder(_slot(corpus.id))
        if holder is not None:
            raise ConflictError(
                f"job {holder.id} is already changing corpus {name!r}'s language ({holder.status})",
                "language",
            )
        params = {"language": language, "previous": corpus.language}
        job = repository.add(str(uuid.uuid4()), KIND, name, params, exclusive=_slot(corpus.id))
        job.progress = {"stage": "queued"}
        return job


def _detect_missing(sessions: sessionmaker[Session], name: str, context: JobContext) -> int:
    """Detect and store the language of every document without one; how many were detected."""
    after = done = 0
    while True:
        with transaction(sessions) as session:
            languages = DocumentLanguages(session, require_corpus(session, name))
            batch = languages.without(after, DETECT_BATCH)
            if not batch:
                return done
            languages.set({pk: detect(text).language for pk, text in batch})
        after, done = batch[-1][0], done + len(batch)
        context.check_cancel()
        context.progress("detecting", detected=done)


def run_language_change(service: ServiceContext, context: JobContext) -> Outcome:
    """The `language` job: detect (for `multi`), build and save the new index, then switch."""
    language = str(context.params["language"])
    name = context.corpus or ""
    sessions = service.sessions
    detected = _detect_missing(sessions, name, context) if language == MULTI else 0
    context.progress("indexing", detected=detected)
    with sessions() as session:
        corpus = require_corpus(session, name)
        corpus_id, mark = corpus.id, int(corpus.change_seq)
    index = build_lexical(sessions, corpus_id, Analyser(language), mark, root=service.settings.index_dir)
    catch_up_lexical(sessions, corpus_id, index)
    context.check_cancel()
    save_lexical(service.settings.index_dir, corpus_id, index)
    context.progress("switching", detected=detected, documents=len(index))
    with transaction(sessions) as session:
        corpus = require_corpus(session, name, lock=True)  # writers wait for this short step only
        languages = DocumentLanguages(session, corpus)
        if language == MULTI:
            detected += _detect_missing_locked(languages)
        else:
            languages.clear()
        corpus.language = language
    state = service.serving.current()
    if state is not None:
        state.store.follow()  # this process serves the new language at once; the others at their sync
    log.info("corpus %s: now in %s (%d documents, %d detected)", name, language, len(index), detected)
    progress = {"stage": "done", "language": language, "documents": len(index), "detected": detected}
    return Outcome({"progress": progress})


def _detect_missing_locked(languages: DocumentLanguages) -> int:
    """Inside the switch's transaction: the documents written since the detection pass."""
    after = done = 0
    while batch := languages.without(after, DETECT_BATCH):  # a text without a letter stays without one
        languages.set({pk: detect(text).language for pk, text in batch})
        after, done = batch[-1][0], done + len(batch)
    return done
