"""Lexical analysis per language: bm25s's tokens and stop words, PyStemmer's Snowball stemmers.

English is exactly bm25s's default (lower-cased `\\w\\w+` runs, its English stop words, the Snowball
English stemmer), so an English index scores as bm25s does. Every other language takes the same
tokens, its own stop words where bm25s ships a list (14 languages) and its own Snowball stemmer where
PyStemmer has one (33 languages); a language with neither is tokenized only. A `multi` analyser
analyses each text in its own language: given, or detected (indexes/languages.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from indexes.languages import MULTI, detect

__all__ = ["ANALYSIS_VERSION", "SNOWBALL", "STOP_WORDS", "Analyser", "analysed_languages"]

ANALYSIS_VERSION = 1  # bump when a language's analysis changes: snapshots of the old one are rebuilt
TOKEN = re.compile(r"(?u)\b\w\w+\b")
# ISO 639-1 -> PyStemmer's algorithm name (Stemmer.algorithms(), less "porter" and "dutch_porter").
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
    "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
    "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}  # fmt: skip
# ISO 639-1 -> the name of bm25s's stop-word list (NLTK's lists; Korean from stopwords-iso).
STOP_WORDS = {
    "en": "STOPWORDS_EN", "de": "STOPWORDS_GERMAN", "nl": "STOPWORDS_DUTCH", "fr": "STOPWORDS_FRENCH",
    "es": "STOPWORDS_SPANISH", "pt": "STOPWORDS_PORTUGUESE", "it": "STOPWORDS_ITALIAN",
    "ru": "STOPWORDS_RUSSIAN", "sv": "STOPWORDS_SWEDISH", "no": "STOPWORDS_NORWEGIAN",
    "nb": "STOPWORDS_NORWEGIAN", "zh": "STOPWORDS_CHINESE", "tr": "STOPWORDS_TURKISH",
    "ko": "STOPWORDS_KOREAN", "da": "STOPWORDS_DANISH",
}  # fmt: skip
# Arabic short vowels and other marks (U+064B..U+065F, U+0670) and the tatweel (U+0640): \w does not
# match them, so left in they would cut a word in two before the stemmer sees it.
_ARABIC_MARKS = re.compile("[\u064b-\u065f\u0670\u0640]")


def analysed_languages() -> dict[str, dict[str, Any]]:
    """Each language with its own analysis: {code: {"stemmer": name or None, "stop_words": count}}."""
    return {
        code: {"stemmer": SNOWBALL.get(code), "stop_words": len(_stop_words(code))}
        for code in sorted(set(SNOWBALL) | set(STOP_WORDS))
    }


@cache
def _stop_words(language: str | None) -> frozenset[str]:
    import bm25s.stopwords

    name = STOP_WORDS.get(language or "")
    return frozenset(getattr(bm25s.stopwords, name)) if name else frozenset()


@cache
def _stemmer(language: str) -> Any:
    import Stemmer  # PyStemmer: the Snowball stemmers in C

    return Stemmer.Stemmer(SNOWBALL[language])


def terms(text: str, language: str | None, stem: bool = True) -> list[str]:
    """The index terms of a text in a language (None: unknown, tokens only)."""
    if language == "ar":
        text = _ARABIC_MARKS.sub("", text)
    stop = _stop_words(language)
    words = [w for w in TOKEN.findall(text.lower()) if w not in stop]
    if stem and words and language in SNOWBALL:
        return list(_stemmer(language).stemWords(words))
    return words


@dataclass(frozen=True)
class Analyser:
    """How an index analyses texts: in one language (an ISO 639-1 code), or `multi`: each in its own."""

    language: str = "en"
    stem: bool = True

    def __call__(self, text: str, language: str | None = None) -> list[str]:
        """The index terms of a text, in `language` when named, else in this analyser's language (for
        `multi`: the text's detected one)."""
        return terms(text, self.language_of(text, language), self.stem)

    def language_of(self, text: str, language: str | None = None) -> str | None:
        """The language a text is analysed in: the one named, the analyser's own, or (`multi`) detected."""
        if language is not None:
            return language
        if self.language != MULTI:
            return self.language
        return detect(text).language

    def describe(self) -> dict[str, Any]:
        """What a snapshot records, so that an index analysed otherwise never reads it."""
        return {
            "pattern": TOKEN.pattern,
            "lower": True,
            "language": self.language,
            "stop_words": "bm25s",
            "stemmer": "snowball" if self.stem else None,
            "version": ANALYSIS_VERSION,
        }
