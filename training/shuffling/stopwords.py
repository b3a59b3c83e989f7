"""A small built-in English stop-word list for shuffling by words (no NLTK download needed)."""

from __future__ import annotations

import re

__all__ = ["ENGLISH_STOP_WORDS", "content_words", "tokenize"]

# Function words, auxiliaries, pronouns and very common adverbs: sharing one of these says nothing
# about two texts being on the same topic, so they must not become shingles.
_STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each either else ever every few for from further get gets got
    had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him
    himself his how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just
    let's like may me might more most must mustn't my myself neither no nor not now of off on once
    only or other ought our ours ourselves out over own per rather same say says shall shan't she
    she'd she'll she's should shouldn't since so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those though
    through thus to too under until up upon us very via was wasn't we we'd we'll we're we've were
    weren't what what's when when's where where's whether which while who who's whom whose why
    why's will with within without won't would wouldn't yet you you'd you'll you're you've your
    yours yourself yourselves s t d ll m re ve
"""
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())

# Words are runs of letters/digits, with inner apostrophes kept so "don't" matches the list.
_WORD = re.compile(r"\w+(?:'\w+)*")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of a text."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def content_words(text: str, stop_words: frozenset[str] = ENGLISH_STOP_WORDS) -> list[str]:
    """The tokens of a text that are not stop-words, in order (repeats kept)."""
    return [w for w in tokenize(text) if w not in stop_words]
