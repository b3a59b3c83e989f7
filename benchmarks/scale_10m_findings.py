"""What each 10M run found, in words, for benchmarks/scale_10m.md (benchmarks/scale_10m_report.py)."""

# What the 10M re-run (2026-11-29) shows against the first run (2026-11-28), and why: the causes were
# found at 500k rows (`--size 500000 --nlist 1024 --real-texts 2000`, /proc/self/smaps_rollup probed
# around the checkpoint) and fixed; the rows above are the re-run's.
FINDINGS = """## What changed between the two 10M runs, and why

The first run (2026-11-28, on a box shared with other jobs) started in 183.8 s, held 12.95 GiB private
(17.59 resident) and searched at 37 ms p50 (nprobe 128) / 63 ms (256); the re-run (2026-11-29, the idle
2 cores, the same data recipe and index) started in **0.9 s**, holds **0.48 GiB private** (8.07 GiB
resident, of which 7.6 are the mapped IVF lists and float16 rows: file pages of the page cache, shared
between workers and reclaimable) and searches at **13.4 ms p50 (recall@10 .941, nprobe 128) / 23.8 ms
(.956, nprobe 256)**. The recall is the same (the same index); the latency differs with the box's load
and the page cache (the first nprobe measured pays the cold pages: 55 ms at 64). What made the
difference:

- **The BM25 index (most of the memory and nearly all of the start-up).** Held in Python it was about
  1.05 KB a document (about 9.7 GiB at 10M) and rebuilt at every start (about 215 s at 10M, measured at
  500k and extrapolated). A saved generation is now served memory-mapped
  ([lexical_memory.md](lexical_memory.md)), so a restart neither holds nor rebuilds it: 943 MB on disk
  at 10M. A replica's *first* start still
  builds it from the database rows, spilled to mapped generations every 250k documents and merged
  without holding the delta's arrays ([lexical_build.md](lexical_build.md)): at 10M that first start
  took about 8.5 minutes (from the files' times: the runtime started at 06:45:36, the BM25 index was saved
  at 06:54:03; the run that measured it apart then failed on a full disk, see below), and each spill
  re-merges the growing base, so that time grows faster than linearly.
- **The checkpoint's copy of the IVF lists.** An incremental checkpoint reads `ann.faiss` into memory to
  extend it (Faiss 1.15 aborts on `add` to lists mapped with `IO_FLAG_MMAP_IFC`); glibc kept the freed
  copy's pages resident (up to 3.66 GiB at 10M). The checkpoint now calls `malloc_trim`
  (`indexes/checkpoint.py`, `tests/indexes/test_checkpoint_memory.py`).
- **The checkpoint's recall measure** was most of its 223 s: `faiss.knn` takes its BLAS path only from
  128,000 queries. It is now a matrix product and a partial sort ([exact_top_k.md](exact_top_k.md)): the
  re-run's checkpoint took 110 s, and the data part's exact answers 235 s in all instead of 979.
- **Disk.** A checkpoint writes a whole new generation (25.3 GiB at 10M: float32 rows 14.3, float16 rows
  7.2, lists 3.7) before removing the old one, so a 10M corpus needs about 51 GiB free for its vectors.
  The first attempt of this re-run, with the data part's 15 GiB of source vectors still on the disk, hit
  ENOSPC in a checkpoint: the half-written generation was removed and the previous one stayed current
  and served (as `tests/processes/test_full_disk.py` checks on a real full tmpfs).
- **Workers.** 4 `pairank serve` workers on the folder: PSS 1.41 GiB against 0.54 for one (ratio 2.61,
  the target is 1.5). Each worker's own interpreter, torch and encoder (about 0.3 GiB) now dominate,
  because the index's 7.6 GiB are mapped files counted once, and this part's 20 searches per worker
  touch few of their pages; the ratio is above the target because the shared part became small, not
  because anything is copied per worker.
"""


# The third run (2026-11-29, an Intel Xeon box with AVX-512, the same data recipe): PQ codes, sq8 on the
# same box, the BM25 first start built from segments, workers after more searches.
RERUN = """## PQ codes, sq8 on the same box, the BM25 first start from segments (Intel box, 2026-11-29)

A third run, on another 2-core box (Intel Xeon, AVX-512; the rows above marked IVF-PQ and IVF-SQ8), with
the same data recipe (the same vectors, queries and exact answers: sq8's recall here equals the first
box's to the fourth digit). The IVF-PQ data and build rows ran beside a training job (their seconds are
not comparable); every search, serve and workers row, and the sq8 build (1,202 s here against 234 s on
the first box: this box is the slower one at Faiss's int8 work), ran with the box otherwise idle:

- **IVF-PQ (48-byte codes) does not hold its recall at 10M.** Its lists are 0.53 GiB instead of 3.66, so
  the served process is 5.65 GiB resident instead of 8.07 (the float16 rows 4.5 of it): the RSS target is
  met with room. But the PQ candidates miss the true neighbours: with the top 200 re-scored (the setting
  that matched float32 lists at 1M, [index scale](index_scale.md)) recall@10 is 0.62-0.64 at nprobe
  128-256; with 500, 0.80-0.81; with 1,000, 0.90-0.91 (10.9-18.3 ms p50). None of the tried settings
  reaches 0.95; sq8 stays the 10M choice.
- **sq8 on this box** has the first box's recall (0.9405 at nprobe 128, 0.949 at 192, **0.951 at 224**,
  0.956 at 256) at 47-61 ms p50: this box scans int8 lists about 2.5 times slower than the first (13.4 /
  23.8 ms there at 128 / 256), while its PQ scans are the faster kind here. Against the target (p50
  <= 20 ms at recall >= 0.95): the smallest nprobe that reaches 0.95 is 224; on the first box,
  interpolating its measured 128 and 256, about 21 ms. Not met on either box; closer needs more, smaller
  lists (a k-means over 16k+ lists, too slow for these 2 cores) or a GPU build.
- **The BM25 first start** (a replica with no saved BM25 index builds it from the 10M rows) took **300.6 s**
  (peak RSS 3.89 GiB), against about 8.5 minutes in the second run on the first box. The build now spills
  each 250k documents to a segment of its own and merges the segments once at the end
  ([lexical segments](lexical_segments.md)); before, every spill re-merged all the postings written so
  far, so the merge work grew with the square of the corpus. (The boxes differ; the side-by-side ratio
  is the lexical segments page's.) The restart after it: 0.6 s; upsert 7.9 ms p50; checkpoint 107 s.
- **Workers, with more searches.** After 20, 200 and 1,000 varied `/rank` calls per worker, 4 workers'
  PSS stays 1.38-1.39 GiB against 0.51-0.52 for one (ratio 2.67-2.71), and each worker holds only
  0.04-0.07 GiB of the mapped index. The benchmark's tiny model (random weights) maps every text to
  nearly one direction: 1,000 varied queries have a mean cosine of 0.95-0.98 to each other and probe
  181-229 of the 4,096 lists, so traffic through this model cannot warm the index the way real queries,
  spread over the lists, do. What the measure does show: each worker adds about 0.29 GiB of its own
  (interpreter, torch, the encoder) and nothing of the index is copied per worker; the ratio falls as
  workers touch more of the shared index (with 5-8 GiB of it touched by every worker, (1.38 + S) /
  (0.51 + S) is 1.10-1.16), but that state is computed, not measured: the target is not met as measured.
"""

# The fourth run (2026-11-29 afternoon, an AMD EPYC box again): Faiss's parallel mode 1 for one query,
# and the real default MiniLM as the served model.
PARALLEL = """## One query on every core (AMD box, 2026-11-29)

The rows marked "IVF-SQ8, parallel probes": the same data recipe (vectors, queries and exact answers
regenerated: the recall equals the earlier runs' to the fourth digit), with two changes. **The store now
sets Faiss's IVF `parallel_mode` to 1** where it maps a snapshot's list index (`indexes/ann.py`
`split_probes`, called by `load_snapshot`; every served index is mapped so): the lists one query
probes are shared out among the OpenMP threads, where Faiss's
default (0) gives each thread whole queries, so a single `/rank` query scanned its lists on one of the 2
cores. And **the served model is the real all-MiniLM-L6-v2** (`--model default`, its OpenVINO int8
variant as the service runs it), so `/rank` queries spread over the lists as real traffic's do.
Each search row times the served mode and Faiss's serial default **query by query alternately in one
run** (`--serial-baseline`, `benchmarks/index/probe_search.py`), and checks both return the same hits
(they did, every row).

- **Single-query p50 1.6-2.1x lower at the same recall.** The snapshot mapped in one process (`search`):
  at nprobe 224 (recall@10 0.951) **19.7 ms** against 36.7 serial; at 256 (0.956) 22.3 against 41.8; at
  160-256 the ratio is 1.80-1.87. 8 clients' throughput is the same in both modes (48.7-89.3 against
  50.2-91.6 queries/s: with 8 queries in flight the cores were already busy). A first pass of the same
  part, with a paused training process holding 11 GiB so that the page cache could not keep the 10.8 GiB
  of lists and rows, measured 17.4 ms at 224 (32.0 serial, ratio 1.84).
- **In the service process** (`serve`, after its 1-document upserts and a checkpoint that writes a new
  25 GiB generation): 30.5 ms at nprobe 224 and 28.9 ms at 256, against 57.4 and 62.0 serial (ratios
  1.89 and 2.14); the serial baseline doubled too, so what slowed both is the page cache after the
  checkpoint's writes, not the mode.
- **Against the target (p50 <= 20 ms at recall >= .95):** met in the mapped store at nprobe 224 (19.7
  ms, recall 0.951), on a box whose serial int8 scans are about 1.75x slower than the first AMD box's
  (serial 41.8 ms at 256 here, 23.8 there), so about 11-13 ms there by the same ratio (inferred, not
  measured); not met in the service process measured right after a checkpoint (28.9-30.5 ms).
- **Workers, warm: 4 workers' PSS 1.34x one's** (target 1.5). With the real model's queries spread
  over the lists, after 1,000 `/rank` calls per worker each of the 4 workers holds 4.9-5.0 GiB of the
  mapped index (the same pages, counted once between them), and the 4 workers' tree (supervisor and
  multiprocessing's tracker included) has a PSS of 7.53 GiB against 5.60 for one worker: **ratio
  1.34**; after 200 calls 1.39, after 20 (a cold index, 2.1-3.2 GiB of it touched) 1.90. The calls
  come from 2 clients per worker on a new connection each, so that every worker takes a share (a first
  pass on one kept-alive connection fed a single worker everything and measured 1.25-1.82; those rows
  are replaced). The tiny model's runs above (ratio 2.6-2.7) measured workers whose queries all
  probed the same few lists.
- The rest of the served row, with the real model: restart 2.0 s, **1-document upsert 15.1 ms p50**
  (the MiniLM encoding included; 6.8 ms with the tiny model), checkpoint 198 s, resident 7.84 GiB (lists
  3.65, float16 rows 3.64, the process's own 0.56). The data and build parts (1,019 s and 1,483 s) ran
  beside a training job and are not comparable with the first box's 235 s and 234 s.
"""

CHECKPOINTS = """## Checkpoints and the page cache, the checkpoint's priority (AMD box, 2026-11-29, evening)

The rows marked "IVF-SQ8, settled": the fourth run's recipe again, on a box whose int8 scans were
**2.4x slower** than the fourth run's that afternoon (the same `search` part, the mapped store alone:
serial 89.7 ms at nprobe 224 against 36.7; served 45.8 against 19.7), so its milliseconds compare only
within this run. What it tested, side by side where it could:

- **The service process is as fast as the mapped store once its pages are in.** After its own
  checkpoint the service searched at 56.4 ms p50 (nprobe 224; p99 638 ms: the first queries read their
  lists from disk) and, in a second pass straight after, **45.9 ms**, against **45.8 ms** for the mapped
  store alone in a fresh process at the same hour (`search`). The fourth run's gap (30.5 in the service
  against 19.7) was the first pass after a checkpoint, not the service.
- **Page-cache hints** (`indexes/page_cache.py`): right after the checkpoint the new generation's float32
  rows were 0% cached (dropped once written, as intended: no search reads them), its float16 rows 50%,
  and its IVF lists 1%: the prefetch a mapped generation starts (`POSIX_FADV_WILLNEED`) is asynchronous
  and had not read them yet, and (most likely) the checkpoint's own spill of the rows, 14 GiB mapped and
  resident while it runs (seen in its smaps), had pushed the lists out as they were written. So the
  first queries after a checkpoint still pay disk reads (the p99 above); writing the rows once, without
  the spill, is the next step (not done).
- **A checkpoint in the service process at the requests' priority doubles the search latency**, and
  the first serve attempt of this run showed it by accident: the start-up's replay of 1,000 changes
  made the corpus due, the service's own loop began a checkpoint, and the searches ran during it: 77.6 ms
  p50 and a 4.7 s p99 (kept apart in the JSON as "serve, raced by a background checkpoint"; the parts now
  wait out, and never start, the loop's checkpoints). The checkpoint thread now runs
  `PAIRANK_CHECKPOINT_NICE` (10) nice levels below requests (`app/serving/priority.py`; the OpenMP team
  it starts inherits it). `during` measured it: a client sending one query every 100 ms (a desk's
  traffic) from a request thread, warmed up, idle and then during one checkpoint per nice, the lowered
  one first: **p50 43.8 ms idle, 47.6 during the checkpoint at nice 10, 75.9 at nice 0** (p90 53.5,
  83.6, 128.2): the lowered checkpoint costs the searches 9% at the median instead of 73%, and itself
  took 256.9 s instead of 232.3 (x1.11). An earlier pass in the other order, without the warm-up
  (its idle baseline read cold lists from disk: 209 ms; kept apart in the JSON), agrees: 55.7 ms at
  nice 10 against 104.4 at nice 0, the checkpoint 292.3 s against 239.4. The p99 stays in seconds
  either way (2.1-3.5 s): those are disk reads while the checkpoint streams 40 GiB through the page
  cache, which CPU priority does not touch.
- **Batches in the served mode**: 200 queries in one search call took 0.81-1.18x the serial mode's time
  across the six rows above (no consistent cost: with many queries per call, splitting each query's
  lists over the cores does the same work as sharing the queries out).
- The rest of the served row on this box: restart 6.8 s (1.3 s without a replay), 1-document upsert
  25.8 ms p50 (15.1 in the fourth run, the MiniLM encoding on the slower box included), checkpoint
  335 s, resident 7.67 GiB (lists 3.65, float16 rows 3.45, the process's own 0.57); a replica's first
  start, BM25 built from the rows and saved by linking its merged files, 526.8 s (300.6 on the third
  run's Intel box). A `during` attempt that kept the replaced generation mapped filled the disk in its
  second checkpoint: the checkpoint failed with ENOSPC, its half-written generation was removed and the
  previous one went on serving, as the full-disk tests check.
"""

TAILS = """## IVF tails: an appending checkpoint leaves the served pages alone (AMD box, 2026-11-30)

The rows marked "IVF-SQ8, IVF tails": the same recipe (`--model default`, 4,096 lists, refine 100) on the
code where an appending checkpoint hard-links the old generation's row files and IVF lists and writes
only the new rows and a tail of the rows appended since the lists were built (`indexes/ann_tail.py`,
format 4). This box's int8 scans sat between the earlier ones (the mapped store alone, serial, nprobe
224: 64.1 ms, against 36.7 in the fourth run and 89.7 in the "settled" one), so milliseconds compare
within this run; the data part ran beside a CPU training job until 14:58 (not comparable).

- **The service now searches as fast as the mapped store right after its checkpoint.** The serve
  part's checkpoint (2,050 rows appended) took 72.8 s and left the lists **98% cached** (1% after the
  earlier runs' checkpoints, which wrote 25 GiB); the first pass after it: **40.5 ms p50, p99 67.9 ms**
  at nprobe 224 (the earlier runs' first pass: p99 675 and 638 ms, disk reads), the second pass 36.9 ms;
  the mapped store alone in a fresh process at the same hour (`search`, the same generation with its
  tail): **35.9 ms**. The service's first pass is 1.13x the store's and its second 1.03x (the fourth
  run: 1.55x, 30.5 against 19.7). Same hits as Faiss's serial mode in every row.
- **Against the p50 target (<= 20 ms at recall >= .95): not measured met here**: this box's store alone
  needs 35.9 ms at nprobe 224 (recall@10 0.951). On the fourth run's box the store measured 19.7 ms; the
  service now adds 3-13% to the store (this run) instead of 55%, so about 20-22 ms there (inferred from
  the ratios, not measured).
- **Searches during an appending checkpoint (`during --changes 1000 --nices 10`).** With 1,000 new
  documents replayed, the checkpoint at `PAIRANK_CHECKPOINT_NICE` took 120 s and the paced client's p99
  **100 ms** (idle 62.8; p50 45.3 against 39.1), where the "settled" run's checkpoint at the same nice
  (which wrote a whole generation) took 257 s with a p99 of **2,828 ms**. Most of those 120 s were the
  recall measure: an exact search over every float32 row, 14.3 GiB read from disk through the page
  cache. An appending checkpoint now keeps the lists' measured recall (the manifest's
  `recall_at_10_rows` says over how many rows; a fold or rebuild measures it again): the same part
  (`... recall kept`) took **22.2 s**, p50 45.6 ms and p99 132.7 ms over its 205 queries (idle 38.6 /
  54.9).
- The rest of the served row: restart 6.4 s (a replay of 1,000 changes), 1-document upsert **20.2 ms
  p50** (the MiniLM encoding included; 15.1 on the fourth run's box, 25.8 on the "settled" one), a
  replica's first start (BM25 built from the rows) 518 s; resident 4.71 GiB (lists 3.65, float16 rows
  0.09: the refine step's pages are read as queries need them; "private" 0.97 counts every mapping but
  the lists and rows: the ids, BM25's files, the libraries; the store alone holds 0.49). The build took
  595.5 s (peak RSS 22.7 GiB with the mapped rows' pages).
"""
