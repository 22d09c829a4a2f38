"""Run sdnbench's os-ken apps (L2 learning, or shortest path with link discovery); os-ken 4.x has no osken-manager.

Run by the osken venv's python:  python osken_launcher.py --port 6653 --openflow 1.3
                                 python osken_launcher.py --app l2_shortest_path --discover-links
"""

import argparse
import logging
import os
import sys
from pathlib import Path

APPS_DIR = Path(__file__).resolve().parent.parent / "apps"


def parse(argv: list[str]) -> argparse.Namespace:
    """Command-line flags of the launcher."""
    p = argparse.ArgumentParser(description="Start os-ken with sdnbench's L2-learning app.")
    p.add_argument("--host", default="127.0.0.1", help="OpenFlow listen address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=6653, help="OpenFlow TCP listen port (default 6653)")
    p.add_argument("--openflow", choices=["1.0", "1.3"], default="1.3", help="OpenFlow version")
    p.add_argument("--flows", choices=["known", "always", "never"], default="known",
                   help="install a flow for learnt destinations (known), for every PACKET_IN (always), "
                        "or never (PACKET_OUT only)")
    p.add_argument("--idle-timeout", type=int, default=0, help="idle timeout of installed flows in seconds (0 = none)")
    p.add_argument("--app", action="append", help="os-ken app module or file (default: sdnbench's l2_learning)")
    p.add_argument("--discover-links", action="store_true",
                   help="also run os-ken's LLDP link discovery (os_ken.topology.switches, observe_links)")
    p.add_argument("--version", action="store_true", help="print the os-ken version and exit")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Configure os-ken's CONF, then run the apps until killed."""
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.version:
        from importlib.metadata import version

        import os_ken.base.app_manager  # noqa: F401  fails here, not at start, when os-ken is broken
        print(version("os-ken"))
        return 0
    os.environ["SDNBENCH_OPENFLOW"] = args.openflow
    os.environ["SDNBENCH_L2_FLOWS"] = args.flows
    os.environ["SDNBENCH_L2_IDLE_TIMEOUT"] = str(args.idle_timeout)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sys.path.insert(0, str(APPS_DIR))
    from os_ken import cfg
    from os_ken.base.app_manager import AppManager  # before controller: they import each other
    import os_ken.controller.controller  # noqa: F401  registers the ofp-* options

    conf = [f"--ofp-listen-host={args.host}", f"--ofp-tcp-listen-port={args.port}"]
    apps = args.app or ["l2_learning"]
    if args.discover_links:
        import os_ken.topology.switches  # noqa: F401  registers observe-links before CONF parses

        conf.append("--observe-links")
        apps = [*apps, "os_ken.topology.switches"]
    cfg.CONF(args=conf, project="os_ken", default_config_files=[])
    AppManager.run_apps(apps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
