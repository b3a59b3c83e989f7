"""OpenVINO's per-shape kernel cache: speed and memory of the default model's int8 export under the
micro-batcher's varied shapes, with OpenVINO's default cache (5,000 shapes, lengths as they come)
against lengths rounded up to 16 with a 512-shape cache (what OpenVinoBackend ships).

Speed: both compiled models in one process, fed the same passes in shuffled order (a noisy shared
machine slows both alike): random PFCC-S tweets in passes of 1-16 texts, weighted to small passes as
interactive serving makes them. Memory: each variant alone in a fresh process, RSS after the passes.

    .venv/bin/python benchmarks/encode/openvino_shapes.py [--passes 2000]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
VARIANTS = {
    "default cache, lengths as they come": (None, 1),
    "512-shape cache, lengths rounded to 16": (512, 16),
}
PASS_SIZES = [1, 1, 1, 2, 3, 4, 6, 8, 16]


def requests_and_passes(passes: int, seed: int = 0) -> tuple[dict[str, Any], list[dict[str, np.ndarray]]]:
    """A compiled infer request per variant, and the padded passes (unrounded) to feed them."""
    import openvino as ov

    from encoders.backend import pad_batch
    from encoders.exported import OPENVINO_FILE, OpenVinoBackend
    from encoders.loader import EncoderOptions, Variant, load_encoder_backend, variant_folder
    from pairank.models import resolve_model

    spec = resolve_model(None)
    cache = REPO / "data" / "models"
    backend = load_encoder_backend(
        spec, EncoderOptions(backend="openvino", precision="int8", cache_root=cache)
    ).backend
    assert isinstance(backend, OpenVinoBackend)
    model_file = variant_folder(cache, spec, Variant("openvino", "int8")) / OPENVINO_FILE
    requests = {}
    for name, (capacity, _) in VARIANTS.items():
        config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": 2}
        if capacity is not None:
            config["CPU_RUNTIME_CACHE_CAPACITY"] = capacity
        requests[name] = (
            ov.Core()
            .compile_model(ov.Core().read_model(str(model_file)), "CPU", config)
            .create_infer_request()
        )
    data = REPO.parent / "shared" / "data" / "pfcc_snopes" / "queries.jsonl"
    texts = (
        [json.loads(line)["text"] for line in data.read_text().splitlines()]
        if data.is_file()
        else [" ".join(["claim"] * n) for n in range(5, 120)]
    )
    tokens = backend.tokenize(texts)
    rng = random.Random(seed)
    settings = backend.settings
    batches = [sorted(rng.sample(tokens, rng.choice(PASS_SIZES)), key=len) for _ in range(passes)]
    return requests, [pad_batch(b, settings.pad_token_id, settings.input_names) for b in batches]


def rounded(inputs: dict[str, np.ndarray], multiple: int) -> dict[str, np.ndarray]:
    """The same pass padded (masked) to a length that is a multiple of `multiple`."""
    length = next(iter(inputs.values())).shape[1]
    extra = -(-length // multiple) * multiple - length
    return {name: np.pad(array, ((0, 0), (0, extra))) for name, array in inputs.items()}


def speed(passes: int) -> dict[str, float]:
    """Seconds each variant spent on the same passes, interleaved."""
    requests, feeds = requests_and_passes(passes)
    spent = dict.fromkeys(VARIANTS, 0.0)
    rng = random.Random(1)
    for inputs in feeds:
        order = list(VARIANTS)
        rng.shuffle(order)
        for name in order:
            fed = rounded(inputs, VARIANTS[name][1])
            started = time.perf_counter()
            requests[name].infer(fed)
            spent[name] += time.perf_counter() - started
    return {name: round(seconds, 2) for name, seconds in spent.items()}


def memory(name: str, passes: int) -> float:
    """RSS (MiB) of a fresh process after running only this variant on the passes."""
    requests, feeds = requests_and_passes(passes)
    before = _rss()
    for inputs in feeds:
        requests[name].infer(rounded(inputs, VARIANTS[name][1]))
    return round(_rss() - before, 1)


def _rss() -> float:
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def main(argv: list[str] | None = None) -> int:
    """Run both measures; write openvino_shapes.md/.json."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--passes", type=int, default=2000)
    parser.add_argument("--memory-of", help=argparse.SUPPRESS)  # the child process's variant
    args = parser.parse_args(argv)
    if args.memory_of:
        print(json.dumps(memory(args.memory_of, args.passes)))
        return 0
    seconds = speed(args.passes)
    grown = {}
    for name in VARIANTS:
        child = subprocess.run(
            [sys.executable, __file__, "--passes", str(args.passes), "--memory-of", name],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        grown[name] = json.loads(child.stdout.strip().splitlines()[-1])
    payload = {
        "command": command_line("encode/openvino_shapes.py", argv),
        "machine": machine(),
        "passes": args.passes,
        "seconds": seconds,
        "rss_growth_mib": grown,
    }
    out = Path(__file__).resolve().parents[1]
    (out / "openvino_shapes.json").write_text(json.dumps(payload, indent=1) + "\n")
    base, ours = list(VARIANTS)
    lines = [
        "# OpenVINO's shape cache: speed and memory",
        "",
        f"Machine: {payload['machine']['nproc']} CPUs ({payload['machine']['cpu_model']}), "
        f"{payload['machine']['date']}. Command: `{payload['command']}`",
        "",
        f"{args.passes} passes of 1-16 PFCC-S tweets (the default model's OpenVINO int8 export, 2 threads).",
        "",
        "| variant | seconds (same passes, interleaved) | RSS growth, fresh process (MiB) |",
        "|---|---|---|",
        *(f"| {name} | {seconds[name]} | {grown[name]} |" for name in VARIANTS),
        "",
        f"Rounded lengths with a 512-shape cache: **{seconds[base] / seconds[ours]:.2f}x** the default's "
        f"speed, **{grown[ours]:.0f} MiB** grown instead of {grown[base]:.0f}.",
        "",
    ]
    (out / "openvino_shapes.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
