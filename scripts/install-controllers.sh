#!/usr/bin/env bash
# Install the controller environments sdnbench runs: one virtualenv each under
# .venvs/ (or $SDNBENCH_VENVS), with exact versions pinned, and OpenDaylight
# built from Maven Central into .controllers/odl (scripts/install-odl.sh).
#
#   scripts/install-controllers.sh [osken|ryu|faucet|odl|all]...
#
# Idempotent: an environment that exists and imports its controller is left
# alone. Set SDNBENCH_FORCE=1 to rebuild it; SDNBENCH_SKIP_ODL=1 leaves
# OpenDaylight out of `all` (its first build downloads ~400 MB).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENVS="${SDNBENCH_VENVS:-$REPO/.venvs}"

# Versions sdnbench is tested with.
OSKEN_VERSION="4.2.2"
FAUCET_VERSION="1.10.12"
RYU_VERSION="4.34"
# Ryu 4.34 on Python 3.11: eventlet >= 0.34 breaks its hub, dnspython >= 2.3
# breaks eventlet 0.33's green DNS. Its setup.py (pbr + easy_install hooks)
# needs a setuptools that still has easy_install.get_script_args.
RYU_PINS=("eventlet==0.33.3" "dnspython==2.2.1")
RYU_BUILD_PINS=("setuptools==67.8.0" "wheel" "pbr")

say() { printf '[install-controllers] %s\n' "$*"; }

# A Python >= 3.9 that can make a venv with pip: Debian's first, then PATH's.
pick_python() {
    local cand
    for cand in "${SDNBENCH_PYTHON:-}" /usr/bin/python3 "$(command -v python3 || true)"; do
        [ -n "$cand" ] && [ -x "$cand" ] || continue
        if "$cand" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
            echo "$cand"; return 0
        fi
    done
    say "no python3 with venv and ensurepip found; install it: apt-get install -y python3-venv" >&2
    return 1
}

# True when the venv exists and its python runs the given import statement.
imports() {
    local name="$1" code="$2"
    [ -x "$VENVS/$name/bin/python" ] && "$VENVS/$name/bin/python" -c "$code" >/dev/null 2>&1
}

# Ryu imports eventlet.wsgi.ALREADY_HANDLED, which eventlet >= 0.30.3 dropped;
# sdnbench's launcher provides it the same way before Ryu is imported.
RYU_IMPORT='import eventlet.wsgi as w; w.ALREADY_HANDLED = getattr(w, "ALREADY_HANDLED", object()); import ryu.cmd.manager'


fresh_venv() {
    local name="$1" py
    py="$(pick_python)"
    say "$name: creating $VENVS/$name with $py ($("$py" --version 2>&1))"
    rm -rf "${VENVS:?}/$name"
    mkdir -p "$VENVS"
    "$py" -m venv "$VENVS/$name"
    "$VENVS/$name/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
}

pipin() {
    local name="$1"; shift
    say "$name: pip install $*"
    "$VENVS/$name/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}

# ensure NAME IMPORT-CHECK PACKAGES-FUNCTION: build .venvs/NAME unless it already imports.
ensure() {
    local name="$1" check="$2" packages="$3"
    if [ -z "${SDNBENCH_FORCE:-}" ] && imports "$name" "$check"; then
        say "$name: already installed in $VENVS/$name"
        return
    fi
    fresh_venv "$name"
    "$packages"
    if ! imports "$name" "$check"; then
        say "$name: installed but does not import; see: $VENVS/$name/bin/python -c '$check'" >&2
        return 1
    fi
    say "$name: ok"
}

osken_packages() { pipin osken "os-ken==$OSKEN_VERSION"; }
faucet_packages() { pipin faucet "faucet==$FAUCET_VERSION"; }
ryu_packages() {
    pipin ryu "${RYU_BUILD_PINS[@]}"
    pipin ryu --no-build-isolation "ryu==$RYU_VERSION" "${RYU_PINS[@]}"
}

install_osken() { ensure osken "import os_ken.base.app_manager" osken_packages; }
install_ryu() { ensure ryu "$RYU_IMPORT" ryu_packages; }
install_faucet() { ensure faucet "import faucet.faucet" faucet_packages; }
install_odl() {
    if [ -n "${SDNBENCH_SKIP_ODL:-}" ]; then
        say "odl: skipped (SDNBENCH_SKIP_ODL is set)"
        return
    fi
    "$REPO/scripts/install-odl.sh"
}

main() {
    local targets=("$@")
    [ ${#targets[@]} -eq 0 ] && targets=(all)
    local t
    for t in "${targets[@]}"; do
        case "$t" in
            osken) install_osken ;;
            ryu) install_ryu ;;
            faucet) install_faucet ;;
            odl) install_odl ;;
            all) install_osken; install_ryu; install_faucet; install_odl ;;
            -h|--help) sed -n '2,10p' "$0"; return 0 ;;
            *) say "unknown controller '$t' (expected osken, ryu, faucet, odl or all)" >&2; return 2 ;;
        esac
    done
}

main "$@"
