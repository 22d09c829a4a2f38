"""Job specs that run a campaign's shards on a scheduler: a Slurm array script, a Kubernetes Indexed Job.

Each array task or indexed pod runs `sdnbench run FILE --shard auto/N --out
RUNS/shard-I --resume` on a machine of its own; a retry resumes the shard; a
merge afterwards combines the shards (`sdnbench merge`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import jinja2
import yaml

from .. import __version__

#: Where Debian's Open vSwitch keeps its schema; the pod creates its database from it.
OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
#: Starts userspace Open vSwitch in the pod: no kernel module is loaded (the node's kernel may
#: lack it, and a privileged pod must not change the node); bridges use the netdev datapath.
START_OVS = f"""\
mkdir -p /etc/openvswitch /var/run/openvswitch /var/log/openvswitch
[ -e /etc/openvswitch/conf.db ] || ovsdb-tool create /etc/openvswitch/conf.db {OVS_SCHEMA}
ovsdb-server --remote=punix:/var/run/openvswitch/db.sock --pidfile --detach --log-file
ovs-vsctl --no-wait init
ovs-vswitchd --pidfile --detach --log-file
"""


@dataclass
class JobSpec:
    """A campaign in `shards` pieces, at most `parallel` at once."""

    experiment: str        # the experiment file, as the jobs will find it from their working directory
    name: str              # the campaign's name (the experiment's)
    shards: int
    parallel: int
    rundir: str            # directory of the shards' run directories and the merged one
    retries: int = 2       # Kubernetes: retries of one index (backoffLimitPerIndex)
    image: str = f"sdnbench:{__version__}"
    volume_claim: str = "sdnbench-campaigns"
    workdir: str = "/campaigns"
    time: str | None = None          # Slurm --time
    partition: str | None = None     # Slurm --partition

    @property
    def job_name(self) -> str:
        """A name Kubernetes and Slurm accept: lowercase letters, digits and '-', at most 52 characters
        (Kubernetes adds the index and a suffix to pod names)."""
        name = re.sub(r"[^a-z0-9-]+", "-", f"sdnbench-{self.name}".lower()).strip("-")
        return name[:52].rstrip("-")

    def run_command(self, index_var: str) -> str:
        """The shell command of one shard, its index from index_var."""
        return (f"sdnbench run {shlex.quote(self.experiment)} --shard auto/{self.shards} "
                f"--shard-index-env {index_var} --out {shlex.quote(self.rundir)}/shard-${index_var} --resume")

    def merge_command(self) -> str:
        """The command that combines the shards once every one has ended."""
        return f"sdnbench merge {shlex.quote(self.rundir)}/shard-* --out {shlex.quote(self.rundir)}/merged"


def slurm_script(spec: JobSpec, script: str) -> str:
    """The sbatch script of a job array, one task per shard; script is where it will be written."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("sdnbench.jobs", "templates"), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, autoescape=False)
    return env.get_template("slurm.sh.j2").render(
        name=spec.job_name, experiment=shlex.quote(spec.experiment), shards=spec.shards, parallel=spec.parallel,
        rundir=shlex.quote(spec.rundir), script=shlex.quote(script), merge=spec.merge_command(), time=spec.time,
        partition=spec.partition)


def kubernetes_job(spec: JobSpec) -> dict:
    """The Indexed Job: one privileged pod per shard and node, userspace Open vSwitch started inside."""
    labels = {"app.kubernetes.io/name": "sdnbench", "sdnbench/campaign": spec.job_name}
    script = "set -eu\n" + START_OVS + "exec " + spec.run_command("JOB_COMPLETION_INDEX") + "\n"
    pod = {
        "restartPolicy": "Never",   # backoffLimitPerIndex needs it: a retry is a new pod that resumes
        # sdnbench is the container's main process (exec): on SIGTERM it stops the trial, removes its
        # network and controller and keeps the store consistent; give it time to
        "terminationGracePeriodSeconds": 120,
        # one shard per node: a campaign owns its machine (CPU, the data plane's threads)
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]}},
        "containers": [{
            "name": "sdnbench",
            "image": spec.image,
            "workingDir": spec.workdir,
            "command": ["/bin/sh", "-c", script],
            # network namespaces, veth pairs, Open vSwitch bridges
            "securityContext": {"privileged": True},
            "volumeMounts": [{"name": "campaigns", "mountPath": spec.workdir}],
        }],
        "volumes": [{"name": "campaigns", "persistentVolumeClaim": {"claimName": spec.volume_claim}}],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": spec.job_name, "labels": labels,
                     "annotations": {"sdnbench/experiment": spec.experiment,
                                     "sdnbench/merge": spec.merge_command()}},
        "spec": {"completionMode": "Indexed", "completions": spec.shards, "parallelism": spec.parallel,
                 "backoffLimitPerIndex": spec.retries, "template": {"metadata": {"labels": labels}, "spec": pod}},
    }


class _BlockDumper(yaml.SafeDumper):
    """safe_dump that writes multi-line strings (the pod's script) as literal blocks, and no anchors."""

    def ignore_aliases(self, data) -> bool:
        return True


_BlockDumper.add_representer(str, lambda dumper, s: dumper.represent_scalar(
    "tag:yaml.org,2002:str", s, style="|" if "\n" in s else None))


def kubernetes_yaml(spec: JobSpec) -> str:
    """The Indexed Job as YAML, with how to start it and merge afterwards."""
    experiment = shlex.quote(spec.experiment)
    head = (f"# {spec.job_name}: {experiment} in {spec.shards} shards, one pod per shard and node\n"
            f"# (written by `sdnbench jobs {experiment} --shards {spec.shards} --kubernetes`).\n"
            f"# The volume claim {spec.volume_claim} holds {experiment} and {spec.rundir}/ (mounted at "
            f"{spec.workdir}).\n"
            f"#   kubectl apply -f job.yaml\n"
            f"#   kubectl wait --for=condition=complete --timeout=-1s job/{spec.job_name}\n"
            f"# then, where the volume is mounted:\n"
            f"#   {spec.merge_command()}\n")
    return head + yaml.dump(kubernetes_job(spec), Dumper=_BlockDumper, sort_keys=False, default_flow_style=False)
