"""Speed of the stress test: the article's loop (faithful reference) against ``lnworked stress``.

One invocation, three measurements, each in a fresh Python process on the CPU, default
configuration (seed 002's three runs) unless ``--layers``/``--steps`` say otherwise:

(a) reference: :func:`lnworked.stress.reference.reference_train`, the article's method:
    per run, ``jax.jit`` one training step (unrolled blocks, placement fixed), then a
    Python loop that draws each batch on the host, takes one step and reads the loss
    back; runs one after another, each compiling its own step;
(b) cold: ``lnworked stress --no-cache`` (no persistent compilation cache);
(c) warm: ``lnworked stress`` with a compilation cache that an untimed run has filled.

Wall times are measured around each process (start-up and imports included). Compile
time: (a) the first step of each run minus a typical step, summed; (b, c) the compile
(or cache load) of the one program, from ``summary.json``. Time per step is the time of
one training step of all three runs together (a: the sum of the three runs' median step
times). Prints a table, the ratios and each run's final loss; writes everything as JSON.

    .venv/bin/python benchmarks/stress_speed.py [--steps N] [--layers L] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _reference_child(layers: int, steps: int) -> None:
    """Runs in the child process: the library's reference loop, timed step by step."""
    import numpy as np

    from lnworked.stress.config import StressConfig
    from lnworked.stress.reference import reference_train

    step_seconds: list = []
    result = reference_train(StressConfig(layers=layers, steps=steps), device="cpu", step_seconds=step_seconds)
    typical = [float(np.median(times[1:])) for times in step_seconds]
    compile_s = sum(times[0] - t for times, t in zip(step_seconds, typical))
    print(json.dumps({"train_seconds": result.seconds, "compile_seconds": compile_s,
                      "step_ms": 1e3 * sum(typical), "final_losses": [r.final_loss for r in result.runs],
                      "max_gradient_norms": [r.max_gradient_norm for r in result.runs],
                      "runs": [r.spec.name for r in result.runs]}))


def _timed(command: list[str], env: dict) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def _stress(args, out: Path, cache: Path, *extra: str) -> dict:
    env = {**os.environ, "LNWORKED_CACHE_DIR": str(cache)}
    command = [sys.executable, "-m", "lnworked.cli", "stress", "--device", "cpu", "--layers", str(args.layers),
               "--steps", str(args.steps), "--out", str(out), *extra]
    wall, _ = _timed(command, env)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    train_s = summary["seconds"] - summary["compile_seconds"]
    return {"wall_seconds": wall, "compile_seconds": summary["compile_seconds"],
            "step_ms": 1e3 * train_s / args.steps, "final_losses": [r["final_loss"] for r in summary["runs"]],
            "max_gradient_norms": [r["max_gradient_norm"] for r in summary["runs"]],
            "runs": [r["name"] for r in summary["runs"]]}


def _machine() -> dict:
    model, cores = platform.processor() or platform.machine(), os.cpu_count()
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - no lscpu
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:  # pragma: no cover - not Linux
        flags = set()
    simd = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "unknown"
    return {"cpu": model, "cores": cores, "simd": simd, "load_average_1min_at_start": load,
            "platform": platform.platform()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=180)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--json", default="stress-speed.json", help="where to write the results")
    parser.add_argument("--child", choices=["reference"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "reference":
        return _reference_child(args.layers, args.steps)
    machine = _machine()
    print(f"machine: {machine['cpu']} ({machine['simd']}), {machine['cores']} cores "
          f"(1-min load {machine['load_average_1min_at_start']:.2f} at start)")
    print(f"layers={args.layers} steps={args.steps}, three runs, CPU", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        wall, stdout = _timed([sys.executable, __file__, "--child", "reference", "--layers", str(args.layers),
                               "--steps", str(args.steps)], dict(os.environ))
        reference = {"wall_seconds": wall, **json.loads(stdout.strip().splitlines()[-1])}
        print(f"  reference done in {wall:.1f} s", flush=True)
        cold = _stress(args, tmp / "cold", tmp / "cache-unused", "--no-cache")
        print(f"  cold done in {cold['wall_seconds']:.1f} s", flush=True)
        _stress(args, tmp / "prime", tmp / "cache")  # fills the cache; not timed
        warm = _stress(args, tmp / "warm", tmp / "cache")
    rows = {"(a) reference (article's loop)": reference, "(b) lnworked stress, cold": cold,
            "(c) lnworked stress, warm cache": warm}
    print(f"\n{'':34} {'wall s':>7} {'compile s':>9} {'ms/step':>8}   final losses ({', '.join(reference['runs'])})"
          "; Pre-LN max gradient norm")
    for name, r in rows.items():
        losses = "  ".join(f"{x:.5f}" for x in r["final_losses"])
        print(f"{name:34} {r['wall_seconds']:7.1f} {r['compile_seconds']:9.1f} {r['step_ms']:8.1f}   {losses}"
              f"; {r['max_gradient_norms'][0]:.3f}")
    ratios = {"reference / cold": reference["wall_seconds"] / cold["wall_seconds"],
              "cold / warm": cold["wall_seconds"] / warm["wall_seconds"],
              "reference / warm": reference["wall_seconds"] / warm["wall_seconds"]}
    print("\nratios (wall): " + "; ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))
    payload = {"machine": machine, "layers": args.layers, "steps": args.steps, "ratios": ratios,
               "reference": reference, "cold": cold, "warm": warm}
    Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
