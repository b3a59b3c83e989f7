"""A calibrated corpus of checks and an inbox on it, for the inbox's use-case tests."""

from __future__ import annotations

from app.serving.runtime import Runtime
from app.usecases.calibration.match import calibrate_corpus
from app.usecases.corpora import CorpusService
from app.usecases.inbox.inboxes import InboxInput, InboxService, WebhookInput
from app.usecases.inbox.intake import ItemInput
from app.usecases.pairs import PairInput, PairService
from tests.helpers.runtime import RuntimeFactory, serve

TOPICS = ["vaccines", "bananas", "towers", "elections", "sharks", "bleach", "masks", "gold", "water", "eggs"]


def check_text(i: int) -> str:
    """The text of check `c{i}`."""
    return f"The mayor said {TOPICS[i % 10]} were banned in town {i // 10} in {1990 + i}."


def tip(i: int, variant: int) -> str:
    """A reader's tip about check `c{i}`; its variants are the same words spaced differently (the tiny test
    model puts every text of this vocabulary within a cosine of .99 of the others: only equal words are
    told apart from other claims, so the tests' threshold is .9999)."""
    text = f"were {TOPICS[i % 10]} banned in town {i // 10} in {1990 + i}?"
    return ["", " ", "  "][variant % 3] + text + ["", "\n", " "][variant % 3]


def calibrated(make_runtime: RuntimeFactory, checks: int = 40, **settings: object) -> Runtime:
    """A serving runtime with corpus `checks` of `checks` documents, calibrated on judged questions."""
    runtime = make_runtime(**{"inbox_cluster_threshold": 0.9999, **settings})
    serve(runtime)
    CorpusService(runtime).create_corpus("checks", "claim", None)
    CorpusService(runtime).upsert_documents(
        "checks", [(f"c{i}", check_text(i), None, True) for i in range(checks)]
    )
    PairService(runtime).add_pairs(
        "checks", [PairInput(tip(i, 0), f"c{i}", None, 1.0) for i in range(min(30, checks))]
    )
    calibrate_corpus(runtime, "checks")
    return runtime


def inbox(runtime: Runtime, name: str = "tips", hooks: tuple[str, ...] = (), grew_after: int = 10) -> dict:
    """Create an inbox on `checks`."""
    return InboxService(runtime).create(
        InboxInput(name, ["checks"], "en", [WebhookInput(url, "s3cret") for url in hooks], grew_after)
    )


def items(pairs: list[tuple[int, int]], prefix: str = "t") -> list[ItemInput]:
    """Tips (check, variant) as items with ids `{prefix}{check}-{variant}`."""
    return [ItemInput(f"{prefix}{i}-{v}", tip(i, v), source="whatsapp") for i, v in pairs]
