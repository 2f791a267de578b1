"""``lnworked stress`` (the article's three runs), ``lnworked stress sweep`` (a grid) and
``lnworked stress seeds`` (one kind of run under several seeds).

Bad arguments raise ``ValueError`` naming the argument; ``lnworked.cli.main`` prints it
on one line and exits with code 2. Ctrl-C writes what was computed so far, then exits
with code 130. :func:`register` needs neither JAX nor Flax nor Optax: they are imported
when a stress command runs, so the other subcommands start quickly. Compiled programs are
kept in JAX's persistent cache (:mod:`lnworked.stress.compile`) unless ``--no-cache``.
"""

from __future__ import annotations

import datetime
import json
import platform
import sys
from importlib import metadata

from lnworked.stress.config import DEFAULT_CHUNK, NORM_CHOICES, StressConfig, default_runs
from lnworked.stress.device import DEVICE_CHOICES, describe_device, select_device
from lnworked.validation import check_int

__all__ = ["register", "run_stress", "run_sweep", "run_seeds", "run_profiles", "run_xiong", "run_deepnorm",
           "run_first_step", "run_branch_scale", "run_family", "run_warmup_schedules", "run_warmup_holds",
           "run_warmup_holds_arrival", "run_warmup_swap", "run_warmup_graft", "run_warmup_workable",
           "run_warmup_sharpness", "run_warmup_workable_sharpness", "run_warmup_arrival", "run_warmup_divisor_split", "run_warmup_reread", "provenance"]

_DEFAULT = StressConfig()


_WARMUP_HELP = "warmup steps of the warmed-up Post-LN run (default: two thirds of --steps)"


def _common(parser, steps_default: int, warmup_help: str = _WARMUP_HELP) -> None:
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="auto",
                        help="auto: a GPU when JAX has one, else the CPU (default)")
    parser.add_argument("--steps", type=int, default=steps_default, help="training steps per run")
    parser.add_argument("--warmup", type=int, default=None, help=warmup_help)
    parser.add_argument("--norm", choices=NORM_CHOICES, default=_DEFAULT.norm, help="LayerNorm or RMSNorm")
    parser.add_argument("--chunk", type=int, default=DEFAULT_CHUNK,
                        help=f"steps per compiled call, i.e. per progress line (default {DEFAULT_CHUNK})")
    parser.add_argument("--no-cache", action="store_true",
                        help="do not use the persistent compilation cache ($LNWORKED_CACHE_DIR, "
                             "else ~/.cache/lnworked/jax)")


def register(subparsers) -> None:
    parser = subparsers.add_parser("stress", help="the JAX stress test of seed 002 (Pre-LN vs Post-LN)",
                                   description="Train the article's three runs and compare with its figures.")
    _common(parser, _DEFAULT.steps)
    parser.add_argument("--layers", type=int, default=_DEFAULT.layers, help="transformer blocks")
    parser.add_argument("--lr", type=float, default=_DEFAULT.learning_rate, help="target learning rate")
    parser.add_argument("--seed", type=int, default=_DEFAULT.seed, help="initialisation and data seed")
    parser.add_argument("--out", default="stress-output", help="output folder (default: stress-output)")
    parser.set_defaults(func=run_stress)
    sub = parser.add_subparsers(dest="stress_command")
    sweep = sub.add_parser("sweep", help="train a grid of depths x learning rates x seeds",
                           description="Pre-LN and Post-LN, with and without warmup, over a grid.")
    _common(sweep, 90)
    sweep.add_argument("--depths", type=int, nargs="+", default=[2, 6, 12], help="numbers of layers")
    sweep.add_argument("--lrs", type=float, nargs="+", default=[5e-4, 2e-3, 8e-3], help="target learning rates")
    sweep.add_argument("--seeds", type=int, nargs="+", default=[7, 8], help="seeds")
    sweep.add_argument("--out", default="sweep-output", help="output folder (default: sweep-output)")
    sweep.set_defaults(func=run_sweep)
    seeds = sub.add_parser("seeds", help="one kind of run under several seeds (full per-step logs)",
                           description="Post-LN (or Pre-LN) at the article's settings under several seeds, "
                                       "batched into one program.")
    _common(seeds, _DEFAULT.steps, "warmup steps of every run (default: 0)")
    seeds.add_argument("--seeds", type=int, nargs="+", default=[7, 8, 9], help="seeds")
    seeds.add_argument("--pre-norm", action="store_true", help="train Pre-LN instead of Post-LN")
    seeds.add_argument("--layers", type=int, default=_DEFAULT.layers, help="transformer blocks")
    seeds.add_argument("--lr", type=float, default=_DEFAULT.learning_rate, help="target learning rate")
    seeds.add_argument("--out", default="seeds-output", help="output folder (default: seeds-output)")
    seeds.set_defaults(func=run_seeds)
    profiles = sub.add_parser("profiles", help="per-layer profiles of the three runs at a few steps",
                              description="Gradient norms (MLP output matrix and whole block), the stream's RMS and "
                                          "each block's write/stream ratios per layer, at initialisation and after "
                                          "some of the article's training steps.")
    profiles.add_argument("--snapshots", type=int, nargs="+", default=[0, 10, 60, 180],
                          help="steps at which to measure (0 = initialisation)")
    profiles.add_argument("--layers", type=int, default=_DEFAULT.layers, help="transformer blocks")
    profiles.add_argument("--steps", type=int, default=_DEFAULT.steps,
                          help="the runs' length (sets the warmup, two thirds of it)")
    profiles.add_argument("--device", choices=DEVICE_CHOICES, default="cpu", help="cpu (default), gpu or auto")
    profiles.add_argument("--no-cache", action="store_true", help="do not use the persistent compilation cache")
    profiles.add_argument("--out", default="profiles-output", help="output folder (default: profiles-output)")
    profiles.add_argument("--step-response", action="store_true",
                          help="instead of the profiles: one step of each run's optimiser at the full rate from "
                               "each snapshot (step-response.csv)")
    profiles.set_defaults(func=run_profiles)
    xiong = sub.add_parser("xiong", help="Xiong et al. (2020)'s W2 gradient at initialisation against depth",
                           description="||d loss / d W2_l|| at initialisation for every layer, depth, seed and "
                                       "placement (first batch and expected gradient), from Xiong et al.'s theory setting to the "
                                       "article's, one "
                                       "difference at a time.")
    xiong.add_argument("--depths", type=int, nargs="+", default=[3, 6, 12, 24], help="numbers of layers")
    xiong.add_argument("--seeds", type=int, nargs="+", default=[7, 8, 9], help="initialisation seeds")
    xiong.add_argument("--batches", type=int, default=8,
                       help="mini-batches the expected gradient is averaged over (default 8)")
    xiong.add_argument("--device", choices=DEVICE_CHOICES, default="cpu", help="cpu (default), gpu or auto")
    xiong.add_argument("--no-cache", action="store_true", help="do not use the persistent compilation cache")
    xiong.add_argument("--readout-swaps", action="store_true",
                       help="instead of the path: vary only the output layer's scale, both ways "
                            "(writes xiong-readout.csv)")
    xiong.add_argument("--swap", nargs="+", metavar="FIELD",
                       help="instead of the path: these configuration fields varied alone, both ways, between "
                            "the theory setting and the article's (writes xiong-swap.csv)")
    xiong.add_argument("--out", default="xiong-output", help="output folder (default: xiong-output)")
    xiong.set_defaults(func=run_xiong)
    for name, summary, description, func in STORED_COMMANDS:
        _stored_run_arguments(sub.add_parser(name, help=summary, description=description), name, func)
    workable = sub.choices["warmup-workable"]
    workable.add_argument("--start", nargs=2, metavar=("KIND", "K"), default=["linear", "60"],
                          help="the schedule trained before the constant rates (default: linear 60)")
    workable.add_argument("--at", type=int, default=30, help="its steps before the constant rates (default: 30)")
    split = sub.choices["warmup-divisor-split"]
    split.add_argument("--placement", choices=("post", "pre"), default="post",
                       help="Post-LN (default) or Pre-LN, both with their first 120 steps held small")


def _stored_run_arguments(parser, name: str, func) -> None:
    """The options of a command run by :func:`_run_stored`: seeds, device, cache and ``--out``
    (default ``<name>-output``)."""
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 8, 9], help="seeds")
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="cpu", help="cpu (default), gpu or auto")
    parser.add_argument("--no-cache", action="store_true", help="do not use the persistent compilation cache")
    parser.add_argument("--out", default=f"{name}-output", help=f"output folder (default: {name}-output)")
    parser.set_defaults(func=func)

def _progress(name: str, step: int, steps: int, loss: float) -> None:
    print(f"  {name:<30} step {step:>5}/{steps}  loss {loss:.4f}", file=sys.stderr, flush=True)


def _chunk(args) -> int:
    return check_int(args.chunk, "chunk", minimum=1)


def _lr(args) -> float:
    """``--lr``, checked here so that the message names the flag (the config says learning_rate)."""
    if not args.lr > 0:
        raise ValueError(f"lr: must be a finite number > 0, got {args.lr!r}")
    return args.lr


def _use_cache(args) -> None:
    if not args.no_cache:
        from lnworked.stress.compile import enable_compilation_cache

        enable_compilation_cache()


def run_stress(args) -> int:
    from lnworked.stress.report import check_writable, summary_table, write_outputs
    from lnworked.stress.train import train

    config = StressConfig(layers=args.layers, steps=args.steps, learning_rate=_lr(args), seed=args.seed,
                          norm=args.norm)
    runs = default_runs(config, args.warmup)
    out = check_writable(args.out)
    device = select_device(args.device)
    _use_cache(args)
    print(f"device: {describe_device(device)}", flush=True)
    print(f"layers={config.layers} steps={config.steps} lr={config.learning_rate:g} "
          f"warmup={runs[-1].warmup_steps} seed={config.seed} norm={config.norm}", flush=True)
    result = train(config, runs, device, chunk_steps=_chunk(args), progress=_progress)
    write_outputs(result, out)
    print()
    print(summary_table(result))
    print(f"\n{len(result.runs)} runs in {result.seconds:.1f} s on {result.device} "
          f"({result.compile_seconds:.1f} s compiling one program); outputs in {out}/")
    if result.interrupted:
        print("interrupted: the outputs hold the steps computed so far", file=sys.stderr)
        return 130
    return 0


def provenance(command: str, device: str, seconds: float) -> dict:
    """Command, device, library versions, platform and date of a result."""
    versions = {}
    for package in ("lnworked", "jax", "jaxlib", "flax", "optax", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover
            versions[package] = None
    return {"command": command, "device": device, "seconds": round(seconds, 1), "versions": versions,
            "python": platform.python_version(), "platform": platform.platform(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def _sweep_command(args) -> str:
    parts = ["lnworked stress sweep", "--depths", *map(str, args.depths), "--lrs", *(f"{r:g}" for r in args.lrs),
             "--seeds", *map(str, args.seeds), "--steps", str(args.steps)]
    if args.warmup is not None:
        parts += ["--warmup", str(args.warmup)]
    if args.norm != _DEFAULT.norm:
        parts += ["--norm", args.norm]
    return " ".join(parts + ["--device", args.device, "--out", args.out])


def run_sweep(args) -> int:
    from lnworked.stress.figures import stability_map
    from lnworked.stress.report import check_writable, save_figure
    from lnworked.stress.sweep import sweep, write_sweep_csv, write_sweep_steps_csv

    base = StressConfig(steps=args.steps, norm=args.norm)
    out = check_writable(args.out)
    device = select_device(args.device)
    _use_cache(args)
    print(f"device: {describe_device(device)}", flush=True)
    result = sweep(args.depths, args.lrs, args.seeds, base, device=device, warmup=args.warmup, chunk_steps=_chunk(args),
                   progress=lambda line: print("  " + line, file=sys.stderr, flush=True))
    write_sweep_csv(result.rows, out / "sweep.csv")
    write_sweep_steps_csv(result.rows, result.curves, out / "sweep-steps.csv")
    info = provenance(_sweep_command(args), result.device, result.seconds)
    info["runs"] = len(result.rows)
    (out / "sweep-provenance.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    if result.rows:
        save_figure(stability_map(result.rows), out / "sweep")
    print(f"{len(result.rows)} runs in {result.seconds:.1f} s on {result.device}; outputs in {out}/")
    if result.interrupted:
        print("interrupted: the outputs hold the runs finished so far", file=sys.stderr)
        return 130
    return 0


def _seeds_command(args) -> str:
    parts = ["lnworked stress seeds", "--seeds", *map(str, args.seeds), "--steps", str(args.steps),
             "--layers", str(args.layers), "--lr", f"{args.lr:g}"]
    if args.pre_norm:
        parts.append("--pre-norm")
    if args.warmup:
        parts += ["--warmup", str(args.warmup)]
    if args.norm != _DEFAULT.norm:
        parts += ["--norm", args.norm]
    return " ".join(parts + ["--device", args.device, "--out", args.out])


def run_seeds(args) -> int:
    import time

    from lnworked.stress.figures import seed_figure
    from lnworked.stress.report import check_writable, save_figure
    from lnworked.stress.sweep import seed_runs, write_seed_runs_csv

    config = StressConfig(layers=args.layers, steps=args.steps, learning_rate=_lr(args), norm=args.norm)
    out = check_writable(args.out)
    device = select_device(args.device)
    _use_cache(args)
    print(f"device: {describe_device(device)}", flush=True)
    started = time.perf_counter()
    runs = seed_runs(config, args.seeds, pre_norm=args.pre_norm, warmup=args.warmup or 0, device=device,
                     chunk_steps=_chunk(args), progress=_progress)
    seconds = time.perf_counter() - started
    write_seed_runs_csv(runs, out / "seeds.csv")
    info = provenance(_seeds_command(args), describe_device(device), seconds)
    info["runs"], info["interrupted"] = len(runs), runs.interrupted
    (out / "seeds-provenance.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    save_figure(seed_figure(runs, config.vocab_size), out / "seeds")
    for seed, run in runs.items():
        print(f"  seed {seed}: final loss {run.final_loss:.4f}, max gradient norm {run.max_gradient_norm:.3f}")
    print(f"{len(runs)} runs in {seconds:.1f} s on {describe_device(device)}; outputs in {out}/")
    if runs.interrupted:
        print("interrupted: the outputs hold the steps computed so far", file=sys.stderr)
        return 130
    return 0


def _snapshot_progress(step: int) -> None:
    print(f"  step {step} measured", file=sys.stderr, flush=True)


def _xiong_progress(label: str) -> None:
    print(f"  {label}: done", file=sys.stderr, flush=True)


def run_profiles(args) -> int:
    import time

    import jax

    from lnworked.stress.profiles import step_responses, trained_profiles, write_profiles_csv, write_step_response_csv
    from lnworked.stress.report import check_writable

    config = StressConfig(layers=args.layers, steps=args.steps)
    snapshots = [check_int(s, "snapshots", minimum=0, maximum=config.steps) for s in args.snapshots]
    out = check_writable(args.out)
    device = select_device(args.device)
    _use_cache(args)
    print(f"device: {describe_device(device)}", flush=True)
    started = time.perf_counter()
    with jax.default_device(device):
        measure = step_responses if args.step_response else trained_profiles
        rows, interrupted = measure(config, snapshots, device=device, progress=_snapshot_progress)
    seconds = time.perf_counter() - started
    name = "step-response" if args.step_response else "profiles"
    (write_step_response_csv if args.step_response else write_profiles_csv)(rows, out / f"{name}.csv")
    command = " ".join(["lnworked stress profiles --snapshots", *map(str, args.snapshots), "--layers",
                        str(config.layers), "--steps", str(config.steps), "--device", args.device, "--out", args.out]
                       + (["--step-response"] if args.step_response else []))
    info = provenance(command, describe_device(device), seconds)
    info["rows"], info["interrupted"] = len(rows), interrupted
    (out / f"{name}-provenance.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows in {seconds:.1f} s on {describe_device(device)}; outputs in {out}/")
    if interrupted:
        print("interrupted: the outputs hold the steps measured so far", file=sys.stderr)
        return 130
    return 0


def run_xiong(args) -> int:
    import time

    import jax

    from lnworked.stress.report import check_writable
    from lnworked.stress.xiong import readout_swaps, sweep_path, theory_swaps, write_xiong_csv

    depths = [check_int(d, "depths", minimum=1) for d in args.depths]
    seeds = [check_int(s, "seeds", minimum=0) for s in args.seeds]
    batches = check_int(args.batches, "batches", minimum=1)
    swap = getattr(args, "swap", None)
    path = theory_swaps(swap) if swap else readout_swaps() if args.readout_swaps else None
    out = check_writable(args.out)
    device = select_device(args.device)
    _use_cache(args)
    print(f"device: {describe_device(device)}", flush=True)
    started = time.perf_counter()
    rows, interrupted = [], False
    try:
        with jax.default_device(device):
            sweep_path(depths, seeds, path=path, into=rows,
                       progress=_xiong_progress, batches=batches)
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - started
    name = "xiong-swap" if swap else "xiong-readout" if args.readout_swaps else "xiong"
    write_xiong_csv(rows, out / f"{name}.csv")
    command = " ".join(["lnworked stress xiong --depths", *map(str, depths), "--seeds", *map(str, seeds),
                        "--batches", str(batches), *(["--readout-swaps"] if args.readout_swaps else []),
                        *(["--swap", *swap] if swap else []), "--device", args.device,
                        "--out", args.out])
    info = provenance(command, describe_device(device), seconds)
    info["rows"], info["interrupted"] = len(rows), interrupted
    (out / f"{name}-provenance.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows in {seconds:.1f} s on {describe_device(device)}; outputs in {out}/")
    if interrupted:
        print("interrupted: the outputs hold the configurations finished so far", file=sys.stderr)
        return 130
    return 0


def _run_stored(args, name: str, compute, write, command: str | None = None) -> int:
    """Check ``args.seeds`` (:func:`~lnworked.stress.first_update.check_seeds`: distinct integers >= 0),
    run ``compute(seeds)`` on the chosen device and write ``<name>.csv`` (by ``write``) and
    ``<name>-provenance.json`` (the command, device, seconds, configuration and row count) into
    ``args.out``: the shared body of the commands whose output the book stores. ``command``: the
    subcommand's name, if not ``name``."""
    import time

    import jax

    from lnworked.stress.first_update import check_seeds
    from lnworked.stress.report import check_writable

    seeds = check_seeds(args.seeds)
    out = check_writable(args.out)
    device = select_device(args.device)
    _use_cache(args)
    print(f"device: {describe_device(device)}", flush=True)
    started = time.perf_counter()
    with jax.default_device(device):
        rows = compute(seeds)
    seconds = time.perf_counter() - started
    write(rows, out / f"{name}.csv")
    command = " ".join([f"lnworked stress {command or name} --seeds", *map(str, seeds), "--device", args.device,
                        "--out", args.out])
    info = provenance(command, describe_device(device), seconds)
    info["config"], info["rows"] = StressConfig().as_dict(), len(rows)
    (out / f"{name}-provenance.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows in {seconds:.1f} s on {describe_device(device)}; outputs in {out}/")
    return 0


def run_deepnorm(args) -> int:
    from lnworked.stress.deepnorm import deepnorm_rows, write_deepnorm_csv

    return _run_stored(args, "deepnorm", lambda s: deepnorm_rows(s, progress=_xiong_progress),
                       write_deepnorm_csv)


def run_first_step(args) -> int:
    from lnworked.stress.first_step import FIRST_STEP_DEPTHS, first_step_rows, write_first_step_csv

    return _run_stored(args, "first-step", lambda s: first_step_rows(FIRST_STEP_DEPTHS, s),
                       write_first_step_csv)


def run_branch_scale(args) -> int:
    from lnworked.stress.branch_scale import branch_scale_rows, write_branch_scale_csv

    return _run_stored(args, "branch-scale", lambda s: branch_scale_rows(s, progress=_xiong_progress),
                       write_branch_scale_csv)


def run_family(args) -> int:
    from lnworked.stress.family_runs import family_rows, write_family_csv

    return _run_stored(args, "family-runs", lambda s: family_rows(s, progress=_xiong_progress),
                       write_family_csv, command="family")


def run_warmup_schedules(args) -> int:
    from lnworked.stress.warmup_schedules import schedule_rows, write_schedule_csv

    return _run_stored(args, "warmup-schedules", schedule_rows, write_schedule_csv)


def run_warmup_holds(args) -> int:
    from lnworked.stress.warmup_schedules import HOLDS, schedule_rows, write_schedule_csv

    return _run_stored(args, "warmup-holds", lambda s: schedule_rows(s, HOLDS), write_schedule_csv)


def run_warmup_pre_rates(args) -> int:
    from lnworked.stress.warmup_schedules import PRE_RATES, schedule_rows, write_schedule_csv

    return _run_stored(args, "warmup-pre-rates", lambda s: schedule_rows(s, PRE_RATES, pre_norm=True),
                       write_schedule_csv)


def run_warmup_swap(args) -> int:
    from lnworked.stress.state_swap import swap_rows, write_swap_csv

    return _run_stored(args, "warmup-swap", swap_rows, write_swap_csv)


def run_warmup_graft(args) -> int:
    from lnworked.stress.state_swap import graft_rows, write_graft_csv

    return _run_stored(args, "warmup-graft", graft_rows, write_graft_csv)


def run_warmup_workable(args) -> int:
    from lnworked.stress.workable import check_workable, workable_rows, write_workable_csv

    kind, k = args.start
    try:
        k = int(k)
    except ValueError:
        raise ValueError(f"start: K must be an integer, got {k!r}") from None
    start, at, _ = check_workable((kind, k), args.at)
    return _run_stored(args, "warmup-workable", lambda s: workable_rows(s, start, at), write_workable_csv,
                       command=f"warmup-workable --start {kind} {k} --at {at}")


def _step_progress(step: int) -> None:
    print(f"  measured step {step}", file=sys.stderr, flush=True)


def run_warmup_arrival(args) -> int:
    from lnworked.stress.arrival import arrival_rows
    from lnworked.stress.sharpness import write_sharpness_csv

    return _run_stored(args, "warmup-arrival", lambda s: arrival_rows(s, progress=_step_progress),
                       write_sharpness_csv)


def run_warmup_holds_arrival(args) -> int:
    from lnworked.stress.arrival import HOLD_RUNS, arrival_rows
    from lnworked.stress.sharpness import write_sharpness_csv

    return _run_stored(args, "warmup-holds-arrival",
                       lambda s: arrival_rows(s, runs=HOLD_RUNS, after=(0,), progress=_step_progress),
                       write_sharpness_csv)


def run_warmup_divisor_split(args) -> int:
    from lnworked.stress.arrival import divisor_split_rows, write_split_csv

    pre = args.placement == "pre"
    return _run_stored(args, "warmup-divisor-split",
                       lambda s: divisor_split_rows(s, run=(pre, ("held", 120)), steps=(0, 10, 120)),
                       write_split_csv, command=f"warmup-divisor-split --placement {args.placement}")


def run_warmup_reread(args) -> int:
    from lnworked.stress.arrival import REREAD_STEPS, divisor_split_rows, write_split_csv

    return _run_stored(args, "warmup-reread", lambda s: divisor_split_rows(s, steps=REREAD_STEPS), write_split_csv)


def run_warmup_sharpness(args) -> int:
    from lnworked.stress.sharpness import sharpness_rows, write_sharpness_csv

    return _run_stored(args, "warmup-sharpness", lambda s: sharpness_rows(s, progress=_step_progress),
                       write_sharpness_csv)


def run_warmup_workable_sharpness(args) -> int:
    from lnworked.stress.sharpness import WORKABLE_RUN, WORKABLE_SNAPSHOTS, sharpness_rows, write_sharpness_csv

    return _run_stored(args, "warmup-workable-sharpness",
                       lambda s: sharpness_rows(s, runs=(WORKABLE_RUN,), snapshots=WORKABLE_SNAPSHOTS,
                                                progress=_step_progress),
                       write_sharpness_csv)


#: The commands that train or measure ahead of time and write one stored CSV (:func:`_run_stored`):
#: ``(name, help, description, function)``.
STORED_COMMANDS = (
    ("deepnorm",
     "DeepNorm's alpha and kappa (its paper's beta), alone and together, without warmup",
     "Branch shares at initialisation, the first update and the training loss of Pre-LN, "
     "Post-LN, Post-LN with DeepNorm's alpha and/or kappa (no warmup) and Post-LN with "
     "warmup, at the article's settings.",
     run_deepnorm),
    ("first-step",
     "the loss along AdamW's first step over a grid of rates and depths",
     "The loss L(theta_0 + t Delta theta) along the first AdamW update and the RMS change "
     "of the logits, for Pre-LN and Post-LN, depths 1-48, warmup's first rate and the "
     "target rate times 2^k (k = -6..2), t = 0, 0.05, ..., 1, at the article's settings, on"
     " the first batch.",
     run_first_step),
    ("branch-scale",
     "Post-LN's first step as its branch scale kappa falls to DeepNorm's (alpha = 1)",
     "The mean branch share, the first AdamW step's relative logit change and delivered "
     "share for Post-LN with its branch kernels times kappa, from 1 to below DeepNorm's (8 "
     "L)^(-1/4), and Pre-LN at kappa = 1, at the article's settings and warmup's first "
     "rate, on the first batch.",
     run_branch_scale),
    ("family",
     "the wider family trained: Pre-LN, Post-LN, DeepNorm, Peri-LN and RMSNorm, at two "
     "rates, without warmup",
     "The 180-step training logs (loss, gradient norm) of Pre-LN, Post-LN, DeepNorm, "
     "Peri-LN and both placements with RMSNorm, at the article's settings and constant "
     "rates 2e-3 and 8e-3 (no warmup); writes family-runs.csv.",
     run_family),
    ("warmup-schedules",
     "Post-LN trained under other rate schedules: the first steps held small, shorter or "
     "cut linear warmups, lower constant rates",
     "The 180-step training loss of Post-LN at the article's settings at the constant rate,"
     " with its first 1-120 steps at warmup's first rate and then the full rate, with "
     "linear warmups of 5-120 steps, at constant rates 2, 4 and 8 times smaller, and with "
     "the article's warmup cut at step 30, 60 or 90; writes warmup-schedules.csv.",
     run_warmup_schedules),
    ("warmup-pre-rates",
     "Pre-LN trained at constant rates from eta/8 to 4 eta, no warmup",
     "The 180-step training loss of Pre-LN at the article's settings at constant rates 8, 4 and 2 "
     "times smaller than the full rate, the full rate, and 2 and 4 times larger, from its initial "
     "weights (no warmup); writes warmup-pre-rates.csv.",
     run_warmup_pre_rates),
    ("warmup-holds",
     "Post-LN with its first steps at a moderate constant rate, then the full rate at once",
     "The 180-step training loss of Post-LN at the article's settings with its first 20 or "
     "60 steps at the full rate over 2, 4 or 8, then the full rate; writes "
     "warmup-holds.csv.",
     run_warmup_holds),
    ("warmup-holds-arrival",
     "Adam's preconditioned sharpness where the moderate holds' full rate arrives",
     "As warmup-arrival, at the step where the full rate arrives, for Post-LN with its "
     "first 20 or 60 steps at the full rate over 2, 4 or 8; writes "
     "warmup-holds-arrival.csv.",
     run_warmup_holds_arrival),
    ("warmup-swap",
     "the eta/2 and eta/4 holds continued at the full rate with their weights and Adam "
     "states exchanged",
     "Post-LN held at eta/2 or eta/4 for 60 steps, then continued at the full rate from "
     "every combination of one hold's weights and the other's Adam state; writes "
     "warmup-swap.csv.",
     run_warmup_swap),
    ("warmup-graft",
     "the eta/2 and eta/4 holds continued at the full rate with one group of parameters "
     "taken from the other hold",
     "Post-LN held at eta/2 or eta/4 for 60 steps, then continued at the full rate from one"
     " hold's weights and Adam state with every block's attention, every block's MLP, every"
     " block's LayerNorms, or the embeddings and readout taken from the other hold's "
     "weights; writes warmup-graft.csv.",
     run_warmup_graft),
    ("warmup-workable",
     "which constant rates work from a schedule's weights part-way: eta/8 to eta from the "
     "linear warmup's step 30",
     "Post-LN trained under a schedule (default: the linear warmup to the full rate at step "
     "60) for some steps (default: 30), then continued at the constant rates eta, eta/2, "
     "eta/4 and eta/8 from its weights and Adam state; writes warmup-workable.csv.",
     run_warmup_workable),
    ("warmup-sharpness",
     "Adam's preconditioned sharpness along Post-LN's rate schedules and Pre-LN's constant "
     "rate",
     "The largest eigenvalue of Adam's preconditioned Hessian times the full rate (stable "
     "below (2 + 2 b1) / (1 - b1) = 38), on the first batch, at steps 0-120 of Post-LN at "
     "the constant rate, with its first 120 steps held small, with the article's warmup cut"
     " at step 30 or 60 and whole, and of Pre-LN at the constant rate; writes "
     "warmup-sharpness.csv.",
     run_warmup_sharpness),
    ("warmup-workable-sharpness",
     "Adam's preconditioned sharpness along the linear warmup to the full rate at step 60",
     "As warmup-sharpness, for Post-LN under the linear warmup that reaches the full rate at "
     "step 60, at steps 0, 10, 20, 30 and 45 (where warmup-workable tries constant rates "
     "from its weights); writes warmup-workable-sharpness.csv.",
     run_warmup_workable_sharpness),
    ("warmup-arrival",
     "Adam's preconditioned sharpness where each schedule's full rate arrives and in the "
     "steps after",
     "As warmup-sharpness, at 0-32 steps after the full rate arrives, for Post-LN at the "
     "constant rate, with its first 20 or 120 steps held small, with the article's warmup "
     "cut at step 30 or 60 and whole, and for Pre-LN at the constant rate; writes "
     "warmup-arrival.csv.",
     run_warmup_arrival),
    ("warmup-divisor-split",
     "The held run's preconditioned sharpness with the weights of one step and Adam's "
     "divisors of another",
     "Post-LN (or, with --placement pre, Pre-LN) with its first 120 steps held small: the full "
     "rate times the top eigenvalue of P_b^(-1/2) H_a P_b^(-1/2), weights after a steps and "
     "divisors after b steps, for a, b in 0, 10, 120; writes warmup-divisor-split.csv.",
     run_warmup_divisor_split),
    ("warmup-reread",
     "the held run's largest preconditioned-sharpness reading, trained again and measured "
     "again",
     "Post-LN with its first 120 steps held small, trained again to steps 136 and 152 (the "
     "stored run's largest reading, seed 9): the full rate times the top eigenvalue of "
     "P_b^(-1/2) H_a P_b^(-1/2) for a, b in 136, 152, as warmup-divisor-split; writes "
     "warmup-reread.csv.",
     run_warmup_reread),
)
