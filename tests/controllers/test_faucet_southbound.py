"""Faucet under southbound load: the benchmark faucet.yaml and the PACKET_IN profile it hands to ofload."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from sdnbench.controllers import ADAPTERS, ControllerSpec, make_adapter
from sdnbench.controllers.base import SouthboundProfile
from sdnbench.controllers.faucet import (ETH_SRC_TABLE, FAUCET_COOKIE, SOUTHBOUND_DP, SOUTHBOUND_PORT,
                                         SOUTHBOUND_VLAN, faucet_config)
from sdnbench.paths import venv_python


def faucet(**options):
    return make_adapter(ControllerSpec(kind="faucet", label="fct", options=options))


def test_southbound_settings_only_when_asked():
    plain, bench = faucet_config({1: 2}), faucet_config({1: 2}, southbound=True)
    assert "ignore_learn_ins" not in plain["dps"]["sw1"] and "max_hosts" not in plain["vlans"]["sdnbench"]
    dp = bench["dps"]["sw1"]
    assert (dp["ignore_learn_ins"], dp["cookie"], dp["metrics_rate_limit_sec"]) == (0, FAUCET_COOKIE, 1)
    assert bench["vlans"]["sdnbench"]["max_hosts"] == 0
    assert all(p == {"native_vlan": "sdnbench", "max_hosts": 0} for p in dp["interfaces"].values())


def test_prepare_writes_each_setting_with_its_reason(tmp_path):
    adapter = faucet(datapaths={1: 4}, southbound=True)
    adapter.prepare(tmp_path)
    text = (tmp_path / "fct-faucet.yaml").read_text()
    assert yaml.safe_load(text) == faucet_config({1: 4}, southbound=True)
    for level, settings in (("dps", SOUTHBOUND_DP), ("vlans", SOUTHBOUND_VLAN), ("interfaces", SOUTHBOUND_PORT)):
        for key, (value, why) in settings.items():
            assert f"#   {level}.{key}: {value} -- {why}" in text
    faucet(datapaths={1: 4}).prepare(tmp_path)
    assert not (tmp_path / "fct-faucet.yaml").read_text().startswith("#"), "network runs keep Faucet's defaults"


def test_profile_is_faucets_pipeline_and_other_adapters_keep_cbenchs():
    p = faucet(vid=42).southbound_profile()
    assert (p.packet_in_reason, p.packet_in_table, p.packet_in_cookie, p.vlan) == ("action", 1, FAUCET_COOKIE, 42)
    assert p.min_macs_per_switch >= 100_000 and p.throughput_window and p.why
    for kind in ("osken", "ryu", "testcontroller"):
        assert make_adapter(ControllerSpec(kind=kind, label=kind)).southbound_profile() == SouthboundProfile()


def test_faucet_itself_reads_the_profile_from_the_config(tmp_path):
    """Faucet's own parser: the learning table is ETH_SRC_TABLE, the cookie ours, no host limits."""
    if not ADAPTERS["faucet"].availability().ok:
        pytest.skip("faucet not installed (make controllers)")
    path = tmp_path / "faucet.yaml"
    path.write_text(yaml.safe_dump(faucet_config({1: 4, 2: 4}, vid=42, southbound=True)))
    probe = ("import json, sys\nfrom faucet.config_parser import dp_parser\n"
             "dp = dp_parser(sys.argv[1], 'probe')[2][0]\n"
             "print(json.dumps([dp.tables['eth_src'].table_id, dp.cookie, dp.ignore_learn_ins, "
             "dp.vlans[42].max_hosts, dp.ports[1].max_hosts, dp.strict_packet_in_cookie]))")
    out = subprocess.run([str(venv_python("faucet")), "-c", probe, str(path)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1]) == [ETH_SRC_TABLE, FAUCET_COOKIE, 0, 0, 0, True]
