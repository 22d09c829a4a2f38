#!/usr/bin/env bash
# Install the Debian packages sdnbench needs and start Open vSwitch.
# Idempotent: installs only what is missing, starts OVS only when it is down.
set -euo pipefail

PACKAGES=(openvswitch-switch openvswitch-testcontroller mininet d-itg iperf3 iperf
          iputils-ping ethtool iproute2 nftables hping3 python3-venv procps util-linux
          openssh-client openssh-server   # the cluster test: a sshd per namespace worker (never started as a service)
          build-essential pkg-config
          openjdk-17-jdk-headless maven   # OpenDaylight: built from Maven Central with Java 17
          chromium influxdb)   # the dashboard's browser test; the InfluxDB export's integration test

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: Debian packages present"
fi

# Open vSwitch: ovsdb-server and ovs-vswitchd. ovs-ctl skips the kernel module
# when the kernel has none; bridges then use the userspace (netdev) datapath.
if ovs-vsctl --timeout=3 show >/dev/null 2>&1 && ovs-appctl -t ovs-vswitchd version >/dev/null 2>&1; then
  echo "setup: Open vSwitch running"
else
  echo "setup: starting Open vSwitch"
  /usr/share/openvswitch/scripts/ovs-ctl start --system-id=random >/dev/null
  ovs-vsctl --timeout=10 show >/dev/null
fi
