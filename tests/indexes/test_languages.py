"""Per-language analysis: inflected matches that English analysis misses, and short-text detection."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexes.analysis import Analyser, analysed_languages, terms
from indexes.languages import ISO_639_1, detect, detectable
from indexes.lexical import LexicalIndex

# Each mini-corpus: four claims, and queries that word one of them with other inflections (another
# number, tense or person, an article glued on): (query, the index of the claim it asks about).
CORPORA: dict[str, tuple[list[str], list[tuple[str, int]]]] = {
    "es": (
        [
            "Las vacunas causan infertilidad en las mujeres jóvenes",
            "Los gobiernos ocultaron las muertes de la pandemia",
            "Beber agua caliente curaba la gripe en los niños",
            "Las antenas propagan el virus por las ciudades",
        ],
        [("¿Causó la vacunación esterilidad?", 0), ("El gobierno oculta una muerte", 1),
         ("¿Cura el agua caliente las gripes?", 2), ("Una antena propagó los virus", 3)],
    ),
    "pt": (
        [
            "As vacinas causaram infertilidade nas mulheres jovens",
            "Os governos esconderam as mortes da pandemia",
            "Beber água quente curava a gripe das crianças",
            "As antenas espalharam o vírus pelas cidades",
        ],
        [("A vacinação causou isso?", 0), ("O governo esconde uma morte", 1),
         ("A água quente cura gripes?", 2), ("Uma antena espalha os vírus", 3)],
    ),
    "de": (
        [
            "Die Impfungen verursachten Unfruchtbarkeit bei jungen Frauen",
            "Die Regierungen verheimlichten die Todesfälle der Pandemie",
            "Heißes Wasser heilte die Grippe der Kinder",
            "Die Funkmasten verbreiteten das Virus in den Städten",
        ],
        [("Verursacht eine Impfung Unfruchtbarkeit bei einer Frau?", 0),
         ("Die Regierung verheimlicht einen Todesfall", 1), ("Heilen heiße Wässer Grippen?", 2),
         ("Ein Funkmast verbreitet Viren", 3)],
    ),
    "ar": (
        [
            "اللقاحات تسبب العقم عند النساء",
            "الحكومات أخفت الوفيات خلال الجائحة",
            "المعلمون يكتبون الرسائل للطلاب",
            "الصحفيون نشروا الأخبار الكاذبة",
        ],
        [("هل لقاح يسبب عقم", 0), ("حكومة تخفي وفاة", 1), ("معلم رسالة", 2), ("صحفي كاذب", 3)],
    ),
}  # fmt: skip


def check_finds(analyser: Analyser, language: str) -> None:
    """Every query of the language's mini-corpus finds its claim first (fails naming the query)."""
    claims, queries = CORPORA[language]
    index = LexicalIndex(analyser)
    index.apply(list(enumerate(claims)))
    for query, wanted in queries:
        found = index.search(query, 1)
        assert found and found[0][0] == wanted, f"{query!r}: {found}"


@pytest.mark.parametrize("language", sorted(CORPORA))
def test_the_corpus_language_finds_inflected_matches(language: str) -> None:
    check_finds(Analyser(language), language)


@pytest.mark.parametrize("language", sorted(CORPORA))
def test_english_analysis_misses_them(language: str) -> None:
    with pytest.raises(AssertionError):
        check_finds(Analyser("en"), language)


def test_a_multi_index_analyses_each_document_in_its_own_language() -> None:
    index = LexicalIndex(Analyser("multi"))
    documents, given = [], {}
    for i, lang in enumerate(CORPORA):
        for n, text in enumerate(CORPORA[lang][0]):
            documents.append((i * 10 + n, text))
            given[i * 10 + n] = lang
    index.apply(documents, languages=given)
    for i, lang in enumerate(CORPORA):
        for query, wanted in CORPORA[lang][1]:
            assert index.search(query, 1, language=lang)[0][0] == i * 10 + wanted, query
    # Without a language, a document is analysed in its detected one: the same terms as when given.
    detected = LexicalIndex(Analyser("multi"))
    detected.apply(documents)
    assert detected.scores("Die Regierung verheimlicht einen Todesfall", language="de") == index.scores(
        "Die Regierung verheimlicht einen Todesfall", language="de"
    )


def test_english_analysis_is_unchanged_and_arabic_marks_do_not_split_words() -> None:
    assert terms("The sharks are swimming", "en") == ["shark", "swim"]
    assert terms("اللَّقَاحَاتُ", "ar") == terms("اللقاحات", "ar") == ["لقاح"]
    assert terms("Les requins", None) == ["les", "requins"]  # unknown: tokens only


def test_a_snapshot_of_another_language_is_never_read(tmp_path: Path) -> None:
    index = LexicalIndex(Analyser("es"))
    index.apply(list(enumerate(CORPORA["es"][0])), hwm=3)
    index.save(tmp_path / "lexical")
    assert LexicalIndex.load(tmp_path / "lexical", Analyser("pt")) is None
    assert LexicalIndex.load(tmp_path / "lexical", Analyser("multi")) is None
    loaded = LexicalIndex.load(tmp_path / "lexical", Analyser("es"))
    assert loaded is not None and loaded.scores("vacuna") == index.scores("vacuna")


SHORT_TEXTS = Path(__file__).with_name("short_texts.tsv")


def test_detection_of_short_texts() -> None:
    rows = [line.split("\t") for line in SHORT_TEXTS.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) == 64 and len({lang for lang, _ in rows}) == 8
    wrong = [(lang, text, detect(text).language) for lang, text in rows if detect(text).language != lang]
    assert len(wrong) <= 2, wrong  # 63 of 64 measured (docs/concepts/languages.md)
    assert detect("!!! 123").language is None and detect("").confidence == 0.0
    claim = "Las antenas 5G propagan el coronavirus."
    assert detect(claim) == detect(claim) and detect(claim).language == "es"


def test_detection_names_iso_codes_and_every_analysed_language_is_one() -> None:
    assert detectable() <= ISO_639_1 and {"es", "pt", "de", "ar", "sw", "en"} <= detectable()
    analysed = analysed_languages()
    assert set(analysed) <= ISO_639_1 and analysed["ar"]["stemmer"] == "arabic"
    assert analysed["es"]["stop_words"] > 100 and analysed["ar"]["stop_words"] == 0
