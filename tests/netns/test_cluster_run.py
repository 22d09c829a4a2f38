"""A whole `sdnbench run` of an experiment with a cluster section, over two namespace workers: the managed
controller on the head, the topology on the workers, a native traffic trial stored ok with the cluster in its
environment (functional only), and nothing left on either worker. The campaign takes the machine's network
lock itself, so this file holds none around the lab."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdnbench.config.loader import parse_experiment
from sdnbench.manifest import Manifest
from sdnbench.runner.campaign import run_campaign

from .cluster_lab import SSHD, WorkerLab
from .helpers import free_port
from .test_cluster import assert_workers_empty, lab_names

pytestmark = [pytest.mark.netns, pytest.mark.slow,
              pytest.mark.skipif(not SSHD.exists(), reason="no sshd: apt-get install openssh-server")]


def experiment(lab: WorkerLab, port: int) -> str:
    workers = ", ".join(f"{{name: {w.name}, address: {w.address}}}" for w in lab.workers)
    return f"""\
name: cluster-run
repetitions: 1
openflow: "1.0"
controllers:
  - {{kind: testcontroller, host: {lab.head}, port: {port}}}
topologies:
  - {{kind: linear, switches: 4}}
cluster:
  workers: [{workers}]
  user: root
  ssh_config: {lab.ssh_config}
  clock_sync: true     # one kernel: the namespace workers share its clock
workloads:
  - name: udp
    engine: native
    flows: [{{src: first, dst: last, proto: udp, rate_pps: 200, count: 400}}]
"""


def test_a_run_with_a_cluster_section_stores_its_trial(tmp_path):
    with WorkerLab() as lab:
        path = tmp_path / "cluster-run.yaml"
        path.write_text(experiment(lab, free_port()))
        exp = parse_experiment(path.read_text(), path)
        store = run_campaign(exp, tmp_path / "run", progress_out=lambda line: None)
        [trial] = store.trials()
        assert trial.status == "ok", trial.error
        env = json.loads(trial.environment) if isinstance(trial.environment, str) else trial.environment
        assert env["links"] == "vxlan" and env["functional_only"] is True
        assert env["cluster"]["placement"] == {"s1": "w1", "s2": "w1", "s3": "w2", "s4": "w2"}
        assert_workers_empty(lab, Manifest(tmp_path / "run"))
    assert lab_names() == []
    assert not Path(lab.base).exists()
