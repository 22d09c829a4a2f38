#!/usr/bin/env bash
# Build the OpenDaylight distribution sdnbench runs (OpenFlow plugin + RESTCONF)
# from Maven Central with the project's POM (scripts/odl/pom.xml).
#
#   scripts/install-odl.sh
#
# Result: $SDNBENCH_CONTROLLERS/odl/karaf (default .controllers/odl/karaf), a Karaf
# distribution that boots offline; the Maven local repository stays in
# .controllers/odl/m2 so a rebuild downloads nothing. Needs Java 17 and
# Maven >= 3.8.3 (Debian: openjdk-17-jdk-headless maven).
#
# Idempotent: a distribution built from the same POM and script is left alone.
# Set SDNBENCH_FORCE=1 to rebuild it.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SDNBENCH_CONTROLLERS:-$REPO/.controllers}/odl"
POM="$REPO/scripts/odl/pom.xml"
KARAF="$CACHE/karaf"
INFO="$KARAF/sdnbench-odl.properties"   # read by sdnbench/controllers/odl.py
# OpenDaylight features that boot with the distribution.
FEATURES="odl-openflowplugin-flow-services,odl-restconf"

say() { printf '[install-odl] %s\n' "$*"; }

# The build's identity: the POM and this script (which edits the distribution).
stamp() { cat "$POM" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1; }

# A JDK 17: $JAVA_HOME if it is one, else the first under /usr/lib/jvm. OpenDaylight
# Potassium needs 17; the newer JDKs a machine may also have do not boot it cleanly.
java17_home() {
    local cand
    for cand in "${JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/*17*; do
        [ -n "$cand" ] && [ -x "$cand/bin/java" ] && [ -x "$cand/bin/javac" ] || continue
        if grep -q '^JAVA_VERSION="17[."]' "$cand/release" 2>/dev/null; then
            echo "$cand"; return 0
        fi
    done
    return 1
}

# Maven's own version line, without the colour codes it adds on a terminal.
mvn_version() { mvn -v 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' | sed -n 's/^Apache Maven \([0-9.]*\).*/\1/p' | head -1; }

maven_ok() {
    local version
    command -v mvn >/dev/null || return 1
    version="$(mvn_version)"
    # Potassium's odlparent enforces Maven >= 3.8.3.
    printf '%s\n3.8.3\n' "$version" | sort -V -C -r
}

main() {
    case "${1:-}" in -h|--help) sed -n '2,13p' "$0"; return 0 ;; esac
    if [ -z "${SDNBENCH_FORCE:-}" ] && [ -x "$KARAF/bin/karaf" ] && [ -f "$INFO" ] \
        && grep -qx "stamp=$(stamp)" "$INFO"; then
        say "already built in $KARAF"
        return 0
    fi
    local jhome
    if ! jhome="$(java17_home)"; then
        say "no JDK 17 found (JAVA_HOME or /usr/lib/jvm); fix: apt-get install -y openjdk-17-jdk-headless" >&2
        return 1
    fi
    if ! maven_ok; then
        say "Maven >= 3.8.3 not found; fix: apt-get install -y maven" >&2
        return 1
    fi
    mkdir -p "$CACHE/build" "$CACHE/m2"
    cp "$POM" "$CACHE/build/pom.xml"
    say "building with $jhome and Maven $(mvn_version) (first build: ~400 MB from Maven Central)"
    local t0=$SECONDS
    # The local repository lives in the cache: a rebuild is offline, and ~/.m2 is untouched.
    if ! (cd "$CACHE/build" && JAVA_HOME="$jhome" mvn -B -Dstyle.color=never -Dmaven.repo.local="$CACHE/m2" \
            package > "$CACHE/build.log" 2>&1); then
        tail -n 30 "$CACHE/build.log" >&2
        say "mvn package failed; its log: $CACHE/build.log" >&2
        return 1
    fi
    local built="$CACHE/build/target/assembly"
    [ -x "$built/bin/karaf" ] || { say "the build made no Karaf assembly in $built" >&2; return 1; }

    # Boot the two features with Karaf's own; the SSH console listens on loopback only.
    sed -i "s|^featuresBoot *= *\(.*\)$|featuresBoot = \1,$FEATURES|" "$built/etc/org.apache.karaf.features.cfg"
    sed -i 's|^sshHost *=.*|sshHost = 127.0.0.1|' "$built/etc/org.apache.karaf.shell.cfg"
    grep -q "featuresBoot = .*,$FEATURES$" "$built/etc/org.apache.karaf.features.cfg" \
        || { say "could not add $FEATURES to featuresBoot" >&2; return 1; }
    {
        echo "stamp=$(stamp)"
        echo "java_home=$jhome"
        echo "features=$FEATURES"
        grep -o '<\(openflowplugin\|netconf\)\.version>[^<]*' "$POM" | sed 's/<\([a-z]*\)\.version>/\1=/'
        grep -A2 '<artifactId>karaf4-parent' "$POM" | sed -n 's/.*<version>\(.*\)<\/version>.*/odlparent=\1/p'
        echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    } > "$built/sdnbench-odl.properties"
    rm -rf "$KARAF.old"
    [ -d "$KARAF" ] && mv "$KARAF" "$KARAF.old"
    mv "$built" "$KARAF"
    rm -rf "$KARAF.old" "$CACHE/build/target"
    say "built in $((SECONDS - t0)) s: $KARAF ($(du -sh "$KARAF" | cut -f1); Maven repository $(du -sh "$CACHE/m2" | cut -f1))"
}

main "$@"
