"""Which search structure a corpus uses: exact (flat), HNSW or IVF (optionally compressed, then refined),
and its knobs."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

IndexType = Literal["auto", "flat", "hnsw", "ivf"]
Compression = Literal["none", "sq8", "pq", "pq4"]
Storage = Literal["vector", "halfvec", "bit"]
# Exact search reads every vector per query: fine (a few ms) below this size, too slow above it.
AUTO_FLAT_BELOW = 200_000
# Faiss wants about 39 training points per IVF list; below that an IVF corpus stays exact for now.
TRAINING_POINTS_PER_LIST = 39
# A product quantizer learns 256 codes per sub-quantizer: Faiss asks for 39 training points per code.
PQ_TRAINING_POINTS = 256 * TRAINING_POINTS_PER_LIST
# Four-bit codes (`pq4`): 16 codes per sub-quantizer.
PQ4_TRAINING_POINTS = 16 * TRAINING_POINTS_PER_LIST
# Re-scoring reads one float16 row (2 bytes/dim) per candidate: beyond a few thousand it costs what the
# lists saved.
MAX_REFINE = 4096


@dataclass(frozen=True)
class IndexSpec:
    """A corpus's index settings, as accepted by `POST /v1/corpora` and stored with the corpus."""

    type: IndexType = "auto"  # auto: exact (flat) below AUTO_FLAT_BELOW documents, IVF above
    m: int = 32  # HNSW: links per node
    ef_construction: int = 80  # HNSW: build-time beam width
    ef_search: int = 96  # HNSW: search-time beam width (raised to k when k is larger)
    nlist: int | None = None  # IVF: lists; default about 4 sqrt(n)
    nprobe: int = 32  # IVF: lists visited per query
    # IVF: none (exact vectors in lists), sq8 (1 byte/dim), pq (8-bit codes) or pq4 (4-bit codes, scanned
    # with SIMD lookups: Faiss's fast scan)
    compression: Compression = "none"
    # IVF-PQ: code bytes per vector: pq's sub-quantizers (8 bits each), pq4's twice as many (4 bits); the
    # largest divisor of the dimension up to that count is used
    pq_m: int = 48
    # Compressed IVF: this many candidates (at least k) are re-scored exactly from float16 copies of the
    # vectors, memory-mapped from the snapshot; 0 ranks by the compressed codes alone.
    refine: int = 0
    # pgvector: the HNSW graph over float32 (`vector`), float16 (`halfvec`: half the index bytes) or sign
    # bits (`bit`: binary quantization, 1/32 of the vector bytes); halfvec and bit need pgvector >= 0.7 and
    # re-score their candidates from the float32 rows. The Faiss store ignores it.
    storage: Storage = "vector"

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> IndexSpec:
        """The spec stored with a corpus (absent: auto)."""
        return cls(**(data or {}))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    def structure(self, count: int) -> Literal["flat", "hnsw", "ivf"]:
        """The structure to build for a corpus of `count` vectors."""
        if self.type == "auto":
            # IVF rather than HNSW above the threshold: at 1M vectors it kept recall@10 >= 0.95 at 27-75x
            # the exact speed, extends by assignment at each checkpoint, and its lists are memory-mapped
            # (shared by workers); HNSW with M=16 fell to 0.4-0.55 recall there (benchmarks/index_scale.md).
            return "flat" if count < AUTO_FLAT_BELOW else "ivf"
        if self.type == "ivf" and count < self.training_points(count):
            return "flat"  # too few vectors to train the lists well; exact search is fast at this size
        return self.type

    def training_points(self, count: int) -> int:
        """Vectors an IVF over `count` vectors needs to train its lists (and PQ codebooks) well."""
        for_lists = TRAINING_POINTS_PER_LIST * self.lists(count)
        codebooks = {"pq": PQ_TRAINING_POINTS, "pq4": PQ4_TRAINING_POINTS}.get(self.compression, 0)
        return max(for_lists, codebooks)

    def lists(self, count: int) -> int:
        """IVF list count for `count` vectors."""
        return self.nlist or max(16, int(4 * math.sqrt(max(count, 1))))

    def validate(self) -> None:
        """Raise ValueError naming the field when a setting is out of range."""
        if self.type not in ("auto", "flat", "hnsw", "ivf"):
            raise ValueError(f"index.type must be auto, flat, hnsw or ivf, not {self.type!r}")
        if not 4 <= self.m <= 128:
            raise ValueError("index.m must be within 4..128")
        if not 8 <= self.ef_construction <= 1024 or not 8 <= self.ef_search <= 4096:
            raise ValueError("index.ef_construction must be within 8..1024, index.ef_search within 8..4096")
        if self.nlist is not None and not 1 <= self.nlist <= 262_144:
            raise ValueError("index.nlist must be within 1..262144")
        if not 1 <= self.nprobe <= 65_536:
            raise ValueError("index.nprobe must be within 1..65536")
        if self.compression not in ("none", "sq8", "pq", "pq4"):
            raise ValueError("index.compression must be none, sq8, pq or pq4")
        if self.compression != "none" and self.type != "ivf":
            raise ValueError("index.compression applies to type ivf only")
        if not 0 <= self.refine <= MAX_REFINE:
            raise ValueError(f"index.refine must be within 0..{MAX_REFINE}")
        if self.storage not in ("vector", "halfvec", "bit"):
            raise ValueError("index.storage must be vector, halfvec or bit")
        if self.storage != "vector" and self.type == "flat":
            raise ValueError(f"index.storage {self.storage} needs a graph: type auto, hnsw or ivf, not flat")

    def refined(self, structure: str) -> bool:
        """True when searches over `structure` re-score their candidates from the float16 copy."""
        # Float32 lists score exactly already: there `refine` is accepted and has nothing to do.
        return bool(self.refine) and structure == "ivf" and self.compression != "none"
