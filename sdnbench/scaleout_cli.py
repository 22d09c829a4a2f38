"""Command-line parts of campaigns across machines: `run --shard`, `sdnbench merge`, `sdnbench jobs`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import SdnbenchError


def _shard_options(c, what: str, after: str = "") -> None:
    c.add_argument("--shard", metavar="I/N",
                   help=f"{what} shard I of N (0-based): the plan's groups (controller x topology) are sorted by "
                        f"name and dealt round-robin, the same on every machine. auto/N reads I from "
                        f"SLURM_ARRAY_TASK_ID or else JOB_COMPLETION_INDEX{after}")
    c.add_argument("--shard-index-env", metavar="VAR",
                   help="with --shard auto/N: read the index from this environment variable only")


def add_run_options(c) -> None:
    """The run command's options for running one shard of a campaign."""
    _shard_options(c, "run only", ". Each shard needs its own --out; combine them with `sdnbench merge`")


def add_plan_options(c) -> None:
    """The plan command's options for listing one shard's trials."""
    _shard_options(c, "list only the trials of")


def shard_of(args):
    """The Shard of --shard / --shard-index-env, or None for the whole plan."""
    if args.shard is None:
        if args.shard_index_env:
            raise SdnbenchError("--shard-index-env needs --shard auto/N: the number of shards")
        return None
    from .runner.shard import parse_shard

    return parse_shard(args.shard, args.shard_index_env)


def resume_options(args) -> str:
    """The shard options to repeat when resuming this run (empty without --shard)."""
    if args.shard is None:
        return ""
    return f" --shard {args.shard}" + (f" --shard-index-env {args.shard_index_env}" if args.shard_index_env else "")


def _cmd_merge(args) -> int:
    from .results.merge import gaps, merge

    result = merge([Path(d) for d in args.rundir], Path(args.out), args.allow_incomplete, set(args.ignore_env or ()))
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if not result.complete:
        print(f"warning: incomplete campaign: {gaps(result)}", file=sys.stderr)
    print(f"merged shards {', '.join(map(str, result.shards))}: {result.trials} trials ({result.failed} failed) "
          f"into {args.out}; read it with: sdnbench results {args.out}")
    return 0


def _cmd_jobs(args) -> int:
    from .config.loader import load_experiment
    from .jobs import JobSpec, kubernetes_yaml, slurm_script
    from .runner.plan import expand
    from .runner.shard import MAX_SHARDS, group_key

    if not 1 <= args.shards <= MAX_SHARDS or (args.parallel is not None and args.parallel < 1) or args.retries < 0:
        raise SdnbenchError(f"--shards must lie between 1 and {MAX_SHARDS}, --parallel be at least 1 and "
                            f"--retries at least 0")
    exp = load_experiment(args.file)
    groups = len({group_key(t) for t in expand(exp)})
    if args.shards > groups:
        print(f"warning: {args.shards} shards for {groups} groups: {args.shards - groups} of them will have "
              f"nothing to run", file=sys.stderr)
    rundir = args.runs or f"runs/{exp.name}"
    spec = JobSpec(args.file, exp.name, args.shards, min(args.parallel or args.shards, args.shards), rundir,
                   retries=args.retries, image=args.image or JobSpec.image, volume_claim=args.volume_claim,
                   time=args.time, partition=args.partition)
    out = Path(rundir if args.out in (None, "-") else args.out)
    name = "slurm.sh" if args.slurm else "job.yaml"
    text = slurm_script(spec, str(out / name)) if args.slurm else kubernetes_yaml(spec)
    if args.out == "-":
        print(text, end="")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    Path(rundir).mkdir(parents=True, exist_ok=True)     # Slurm opens its --output there and creates no directory
    (out / name).write_text(text)
    submit = f"sbatch {out / name}" if args.slurm else f"kubectl apply -f {out / name}"
    print(f"wrote {out / name}: {args.shards} shards of {groups} groups, at most {spec.parallel} at once\n"
          f"start:      {submit}\nafterwards: {spec.merge_command()}")
    return 0


def add_commands(sub) -> None:
    """The merge and jobs subcommands."""
    c = sub.add_parser(
        "merge", help="combine the run directories of a campaign's shards into one",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Combine the stores of `sdnbench run FILE --shard I/N` runs into one run directory that "
                    "`results`, `report` and `compare` read as if the campaign had run on one machine.\n\n"
                    "Refused: shards of another experiment file or number of shards (each store records a "
                    "hash of the experiment and of its plan), a shard or a trial given twice (keep the store "
                    "you trust and leave the other out), and shards whose environments differ in what shapes "
                    "a measurement: kernel, CPU model and count, Open vSwitch, sdnbench and Python versions, "
                    "the data plane of each topology, the version of each controller. Host names and the OS "
                    "string are only reported. A campaign with shards or trials missing is refused unless "
                    "--allow-incomplete; failed trials count as stored, as in one run.",
        epilog="example (4 shards on one machine, one after another):\n"
               "  for i in 0 1 2 3; do sdnbench run exp.yaml --shard $i/4 --out runs/exp/shard-$i; done\n"
               "  sdnbench merge runs/exp/shard-* --out runs/exp/merged && sdnbench results runs/exp/merged")
    c.add_argument("rundir", nargs="+", metavar="RUN", help="run directories of the shards")
    c.add_argument("--out", required=True, metavar="MERGED", help="new run directory for the merged store")
    c.add_argument("--allow-incomplete", action="store_true",
                   help="merge even when shards or trials are missing (each gap is listed as a warning)")
    c.add_argument("--ignore-env", action="append", metavar="FIELD",
                   help="do not require this environment field to match (repeatable), e.g. python")
    c.set_defaults(func=_cmd_merge)

    c = sub.add_parser(
        "jobs", help="write a Slurm array script or a Kubernetes Indexed Job that runs a campaign in shards",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write the job spec that runs FILE in N shards on a scheduler, one machine per shard: "
                    "each task runs `sdnbench run FILE --shard auto/N --out RUNS/shard-I --resume` with I "
                    "from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX, so a retried task resumes its shard. "
                    "Once every task has ended: sdnbench merge RUNS/shard-* --out RUNS/merged.",
        epilog="examples:\n"
               "  sdnbench jobs exp.yaml --shards 8 --parallel 4 --slurm        writes runs/<name>/slurm.sh\n"
               "  sdnbench jobs exp.yaml --shards 8 --kubernetes --image registry/sdnbench:0.1 --out -\n"
               "docs/scale-out.md says what each spec expects of the cluster")
    c.add_argument("file")
    c.add_argument("--shards", type=int, required=True, metavar="N", help="number of shards (array tasks, pods)")
    which = c.add_mutually_exclusive_group(required=True)
    which.add_argument("--slurm", action="store_true", help="an sbatch script: a job array on --exclusive nodes")
    which.add_argument("--kubernetes", action="store_true",
                       help="an Indexed Job: privileged pods, userspace Open vSwitch inside, one pod per node")
    c.add_argument("--parallel", type=int, metavar="K", help="at most K shards at once (default: all)")
    c.add_argument("--out", metavar="DIR",
                   help="where to write slurm.sh or job.yaml (default: the runs directory); - prints it")
    c.add_argument("--runs", metavar="DIR", help="directory of the shards' run directories (default runs/<name>)")
    c.add_argument("--retries", type=int, default=2,
                   help="Kubernetes: retries of one shard before it counts as failed (backoffLimitPerIndex, "
                        "default 2)")
    c.add_argument("--image", help="Kubernetes: container image with sdnbench, its tools and Open vSwitch")
    c.add_argument("--volume-claim", default="sdnbench-campaigns",
                   help="Kubernetes: PersistentVolumeClaim holding FILE and the runs directory "
                        "(default sdnbench-campaigns)")
    c.add_argument("--time", help="Slurm: time limit of one task (--time)")
    c.add_argument("--partition", help="Slurm: partition (--partition)")
    c.set_defaults(func=_cmd_jobs)
