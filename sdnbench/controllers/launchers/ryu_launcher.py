"""Run Ryu 4.34's ryu-manager on Python 3.11 without patching Ryu.

Ryu's app/wsgi.py imports eventlet.wsgi.ALREADY_HANDLED, which eventlet
>= 0.30.3 dropped; the pinned eventlet 0.33.3 is otherwise fine. Providing the
attribute before Ryu is imported is enough. Every other argument goes to
ryu-manager unchanged, e.g.:

    python ryu_launcher.py --ofp-tcp-listen-port 6653 ryu.app.simple_switch_13
"""

import sys


def main(argv: list[str] | None = None) -> int:
    """Provide ALREADY_HANDLED, then hand over to ryu.cmd.manager.main()."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--sdnbench-version"]:
        from importlib.metadata import version
        print(version("ryu"))
        return 0
    import eventlet.wsgi
    if not hasattr(eventlet.wsgi, "ALREADY_HANDLED"):
        eventlet.wsgi.ALREADY_HANDLED = object()
    from ryu.cmd import manager
    sys.argv = ["ryu-manager", *args]
    manager.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
