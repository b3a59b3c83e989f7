"""Languages: the ISO 639-1 codes a corpus or a text may name, and telling a text's language.

Detection is py3langid's naive Bayes over byte n-grams (its model ships in its 4.5 MB wheel, loaded once
per process in under a second), restricted to the languages it knows that have an ISO 639-1 code. On
64 short claims of 8 languages (docs/concepts/languages.md) it named 63 right at 0.1 ms each in 130 MB;
lingua named 62 at 1 GB with every language loaded. A text without a letter has no language (None).

Kept free of heavy imports at module level: request models (and so the Python client) import the codes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["ISO_639_1", "MULTI", "Detection", "detect", "detectable"]

MULTI = "multi"  # a corpus whose documents each have their own language
ISO_639_1 = frozenset(
    """aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv
    dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii
    ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk
    ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc
    sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve
    vi vo wa wo xh yi yo za zh zu""".split()  # noqa: SIM905 - a table reads better as text
)
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Detection:
    """A text's most likely language (None: the text has no letter) and the detector's confidence (0..1)."""

    language: str | None
    confidence: float


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    with _LOCK:
        identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        # Its model also knows regional languages with three-letter codes only (ext, vec, ary): a corpus
        # names ISO 639-1 codes, so a short Spanish claim must not come back as Extremaduran.
        identifier.set_languages(sorted(set(identifier.labels) & ISO_639_1))
    return identifier


def detectable() -> frozenset[str]:
    """The languages detection can name."""
    return frozenset(_identifier().labels)


def detect(text: str) -> Detection:
    """The language of a text, even a short one; deterministic (the same text always gets the same)."""
    if not any(character.isalpha() for character in text):
        return Detection(None, 0.0)
    language, confidence = _identifier().classify(text)
    return Detection(str(language), round(float(confidence), 4))
