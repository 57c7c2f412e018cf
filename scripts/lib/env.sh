# Shared by the project's scripts: where things live, and how to reach a Python >= 3.14.2.
#
# Home Assistant 2026.10 needs Python >= 3.14.2. A host that has it (a `python3.14` on
# PATH, a developer laptop, the HA dev container) is used as it is. A Debian or Ubuntu
# host without it, run as root, gets a Debian sid root file system with Python 3.14 in the
# cache directory; every script then re-executes itself inside it (same paths, same
# network), so the commands stay the same everywhere.
# shellcheck shell=bash

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE_DIR=${PACERELLE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pacerelle-ha}
DOWNLOADS_DIR=$CACHE_DIR/downloads
ROOTFS=$CACHE_DIR/rootfs-sid
ROOTFS_MARKER=$ROOTFS/.pacerelle-rootfs-ready  # the build's packages (comma-separated)
ROOTFS_ADDED=$ROOTFS/.pacerelle-rootfs-added  # those installed since, one a line
# What the root file system holds; an addition here is installed into it by ensure_rootfs.
# g++ builds the wheels that Home Assistant's default_config installs at first start
# (assist_pipeline's audio filters); chromium runs the browser test of the config flow;
# ffmpeg is Home Assistant's converter, used for voice notes (voice_audio.py);
# libturbojpeg0 is what the camera integration loads for snapshots (without it every demo
# start logs a traceback); espeak-ng is the demo's text-to-speech (spoken answers).
ROOTFS_PACKAGES=python3.14,python3.14-venv,python3.14-dev,ca-certificates,gcc,g++,libc6-dev,git,procps,chromium,ffmpeg,libturbojpeg0,espeak-ng
VENV=$ROOT_DIR/.venv
# Home Assistant integrations the tests and the demo run for real (their dependencies follow):
# scripts/setup and scripts/test-ha-next install their requirements.
HA_COMPONENTS="default_config assist_pipeline camera conversation mcp_server"
PEER_DIR=$VENV/reference-peer
export PACERELLE_REFERENCE_PEER=${PACERELLE_REFERENCE_PEER:-$PEER_DIR/libsignalwrap.so}

log() { printf '%s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

python_ok() {
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 14, 2))' >/dev/null 2>&1
}

# Prints the host's Python >= 3.14.2, a `python3.14` on PATH first.
host_python() {
  local candidate
  for candidate in python3.14 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && python_ok "$candidate"; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# The main archive of the host's own apt configuration (never a host written here).
apt_mirror() {
  local file uri
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    uri=$(awk '
      /^[[:space:]]*$/ { if (uri != "" && suites !~ /security/) { print uri; exit } uri = ""; suites = "" }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { suites = $0 }
      END { if (uri != "" && suites !~ /security/) print uri }' "$file" | head -n 1)
    [ -n "$uri" ] && { echo "$uri"; return 0; }
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' "$file")
    [ -n "$uri" ] && { echo "$uri"; return 0; }
  done
  return 1
}

build_rootfs() {
  [ "$(id -u)" = 0 ] || die "no Python >= 3.14.2 found; install python3.14, or run as root on Debian/Ubuntu so that scripts/setup can build one"
  local distro suite mirror
  distro=$(. /etc/os-release && echo "$ID")
  case "$distro" in
    debian) suite=${PACERELLE_ROOTFS_SUITE:-sid} ;;
    ubuntu) suite=${PACERELLE_ROOTFS_SUITE:-resolute} ;;  # Ubuntu 26.04 ships Python 3.14
    *) die "no Python >= 3.14.2 found and the host is $distro, not Debian or Ubuntu; install python3.14" ;;
  esac
  mirror=${PACERELLE_ROOTFS_MIRROR:-$(apt_mirror)} || die "cannot read an apt mirror from /etc/apt"
  if ! command -v mmdebstrap >/dev/null 2>&1; then
    log "setup: installing mmdebstrap"
    apt-get install -y -q mmdebstrap >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && apt-get install -y -q mmdebstrap >/dev/null; } \
      || die "could not install mmdebstrap"
  fi
  log "setup: building a Debian $suite root file system with Python 3.14 in $ROOTFS"
  rm -rf "$ROOTFS.tmp" "$ROOTFS"
  mkdir -p "$CACHE_DIR"
  # The mirror's sid Release file may be expired: do not reject it for that alone.
  mmdebstrap --variant=minbase --aptopt='Acquire::Check-Valid-Until "false"' \
    --include="$ROOTFS_PACKAGES" \
    "$suite" "$ROOTFS.tmp" "$mirror" >"$CACHE_DIR/rootfs-build.log" 2>&1 \
    || die "mmdebstrap failed, see $CACHE_DIR/rootfs-build.log"
  mv "$ROOTFS.tmp" "$ROOTFS"
  echo "$ROOTFS_PACKAGES" >"$ROOTFS_MARKER"
}

# Builds the root file system once; a package of ROOTFS_PACKAGES it lacks later is installed
# into it (a rebuild would pull it from under commands running inside) and recorded in
# ROOTFS_ADDED, never in the build's marker: checkouts of different ages share the cache,
# and none of them finds a package missing that another installed, nor removes one.
ensure_rootfs() {
  [ -f "$ROOTFS_MARKER" ] || build_rootfs
  [ -n "$(rootfs_missing_packages)" ] || return 0
  # One installer at a time (scripts start in parallel); the next finds nothing missing.
  local missing lock
  exec {lock}>"$CACHE_DIR/rootfs.lock"
  flock "$lock"
  missing=$(rootfs_missing_packages)
  if [ -n "$missing" ]; then
    log "setup: adding ${missing% } to the root file system"
    # shellcheck disable=SC2086  # one word per package
    run_in_rootfs /bin/sh -c 'apt-get update -q && apt-get install -y -q "$@"' sh $missing \
      >"$CACHE_DIR/rootfs-update.log" 2>&1 || die "apt-get failed in the root file system, see $CACHE_DIR/rootfs-update.log"
    printf '%s\n' $missing >>"$ROOTFS_ADDED"
  fi
  exec {lock}>&-
}

# The packages of ROOTFS_PACKAGES that neither the build nor a later addition installed.
rootfs_missing_packages() {
  local package installed
  installed=$(tr ',' '\n' <"$ROOTFS_MARKER"; cat "$ROOTFS_ADDED" 2>/dev/null || true)
  for package in ${ROOTFS_PACKAGES//,/ }; do
    grep -qxF -- "$package" <<<"$installed" || printf '%s ' "$package"
  done
}

# The host's CA bundle and resolver: pip and the tests reach the same network as the host.
# Copied only when changed, and by rename: concurrent commands must never read a half copy.
sync_host_files() {
  local source target
  for source in /etc/ssl/certs/ca-certificates.crt /etc/resolv.conf /etc/hosts; do
    target=$ROOTFS$source
    [ -f "$source" ] || continue
    cmp -s "$source" "$target" && continue
    cp -L "$source" "$target.$$" && mv -f "$target.$$" "$target"
  done
  mkdir -p "$DOWNLOADS_DIR"
}

# The command line that runs "$@" (an absolute command path and its arguments) inside the
# root file system, in a private mount namespace so that no mount outlives the command.
# The host's find-links folder does not exist inside; pip would warn at every call.
rootfs_command=(env -u PIP_FIND_LINKS PACERELLE_IN_ROOTFS=1
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  unshare --mount --propagation private --
  "$ROOT_DIR/scripts/lib/chroot-exec" "$ROOTFS" "$ROOT_DIR" "$DOWNLOADS_DIR")

run_in_rootfs() {
  sync_host_files
  "${rootfs_command[@]}" "$PWD" "$@"
}

# Call at the top of a script with "$0" "$@": returns when this process can use Python
# 3.14 directly, otherwise replaces itself with the script run inside the root file system
# (exec all the way down, so that signals sent to the script reach the program).
ensure_python_env() {
  if [ -n "${PACERELLE_IN_ROOTFS:-}" ] || host_python >/dev/null; then
    return 0
  fi
  ensure_rootfs
  local script
  script=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  shift
  sync_host_files
  exec "${rootfs_command[@]}" "$PWD" "$script" "$@"
}

project_python() {
  if [ -x "$VENV/bin/python" ]; then echo "$VENV/bin/python"; else host_python || echo /usr/bin/python3.14; fi
}
