"""Generated job specs: a Slurm array script and a Kubernetes Indexed Job, compared with golden files.

After a deliberate change of a spec: SDNBENCH_UPDATE_GOLDEN=1 pytest tests/unit/test_jobs.py, then read the diff.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from sdnbench.cli import main
from sdnbench.jobs import JobSpec, kubernetes_yaml, slurm_script

GOLDEN = Path(__file__).parent / "data" / "jobs"
SPEC = JobSpec("experiments/r1 wired.yaml", "r1-pox-vs-ryu", 8, 3, "runs/r1", retries=2,
               image="registry.example/sdnbench:0.1.0", time="04:00:00", partition="bench")


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("SDNBENCH_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; if deliberate: SDNBENCH_UPDATE_GOLDEN=1"


def test_slurm_array_script_matches_the_golden_file():
    text = slurm_script(SPEC, "runs/r1/slurm.sh")
    golden("slurm.sh", text)
    assert "#SBATCH --array=0-7%3\n#SBATCH --exclusive\n" in text
    assert ("run 'experiments/r1 wired.yaml' --shard auto/8 --shard-index-env SLURM_ARRAY_TASK_ID "
            "\\\n    --out runs/r1/shard-$SLURM_ARRAY_TASK_ID --resume") in text


@pytest.mark.skipif(not shutil.which("bash"), reason="needs bash")
def test_slurm_script_is_valid_shell(tmp_path):
    script = tmp_path / "slurm.sh"
    script.write_text(slurm_script(SPEC, str(script)))
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0


def test_kubernetes_indexed_job_matches_the_golden_file():
    text = kubernetes_yaml(SPEC)
    golden("job.yaml", text)
    job = yaml.safe_load(text)
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"], spec["backoffLimitPerIndex"]) == (
        "Indexed", 8, 3, 2)
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"          # what backoffLimitPerIndex requires
    [container] = pod["containers"]
    assert container["securityContext"] == {"privileged": True}
    script = container["command"][2]
    assert "ovs-vswitchd --pidfile --detach" in script and "modprobe" not in script
    assert script.rstrip().endswith("--shard auto/8 --shard-index-env JOB_COMPLETION_INDEX "
                                    "--out runs/r1/shard-$JOB_COMPLETION_INDEX --resume")
    assert job["metadata"]["name"] == "sdnbench-r1-pox-vs-ryu"


def test_the_command_writes_the_spec_and_says_how_to_merge(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exp = tmp_path / "exp.yaml"
    exp.write_text("name: two\ncontrollers: [{kind: none}]\ntopologies: [{kind: linear, switches: 2}]\n"
                   "workloads: [{name: u, flows: [{proto: udp, rate_pps: 10, duration_s: 1}]}]\n")
    assert main(["jobs", "exp.yaml", "--shards", "2", "--slurm"]) == 0
    out = capsys.readouterr()
    assert "wrote runs/two/slurm.sh" in out.out and "sdnbench merge runs/two/shard-* --out runs/two/merged" in out.out
    assert "1 of them will have nothing to run" in out.err           # one group, two shards
    assert "--array=0-1%2" in (tmp_path / "runs/two/slurm.sh").read_text()
    assert main(["jobs", "exp.yaml", "--shards", "2", "--kubernetes", "--out", "-"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["spec"]["completions"] == 2
    assert main(["jobs", "exp.yaml", "--shards", "0", "--slurm"]) == 2
