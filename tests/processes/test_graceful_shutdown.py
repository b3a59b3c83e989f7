"""SIGTERM of `pairank serve` under traffic: requests in flight are answered, then a checkpoint is written.

A deploy or a scale-down stops a replica with SIGTERM. Requests it already accepted finish (a bulk
upsert in flight is answered 200 and stored); new connections are refused while it stops, which a load
balancer routes elsewhere; the process exits (by the signal, re-raised once done) and leaves a
checkpoint holding every change, so the next start replays nothing.
"""

from __future__ import annotations

import signal
import threading
import time

import httpx

from tests.helpers.processes import ServerFactory

BATCH = 1000  # documents per upsert (the per-request limit)


def test_sigterm_finishes_requests_in_flight_and_checkpoints(start_server: ServerFactory) -> None:
    server = start_server(
        checkpoint_seconds="3600", checkpoint_changes="1000000"
    )  # only the exit checkpoints
    http = server.http
    assert http.post("/v1/corpora", json={"name": "claims", "kind": "claim"}).status_code == 201
    answers: list[int] = []
    cut: list[str] = []

    def upsert_until_refused() -> None:
        """Back-to-back bulk upserts; once the server stops taking connections, stop too."""
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=120) as client:
            for batch in range(1000):
                texts = [f"claim {batch}-{i} about towers, floods and the moon" for i in range(BATCH)]
                documents = [{"id": f"d{batch}-{i}", "text": t} for i, t in enumerate(texts)]
                try:
                    response = client.post("/v1/corpora/claims/documents", json={"documents": documents})
                except httpx.ConnectError:
                    return  # refused: the server is stopping (a load balancer sends it elsewhere)
                except httpx.TransportError as error:  # accepted, then dropped: what must not happen
                    cut.append(repr(error))
                    return
                answers.append(response.status_code)

    writer = threading.Thread(target=upsert_until_refused)
    writer.start()
    while len(answers) < 2:  # the writer is upserting back to back now
        time.sleep(0.05)
    server.process.send_signal(signal.SIGTERM)
    writer.join(120)
    # uvicorn re-raises the signal once its graceful shutdown is done: the exit status says SIGTERM.
    assert server.process.wait(120) in (0, -signal.SIGTERM)
    assert not cut and set(answers) == {200}, (cut, answers)

    restarted = start_server()
    index = restarted.http.get("/v1/corpora/claims/index").json()
    assert index["size"] == len(answers) * BATCH  # every acknowledged upsert, nothing else
    assert index["changes_since_checkpoint"] == 0 and index["high_water_mark"] == index["corpus_change_seq"]
