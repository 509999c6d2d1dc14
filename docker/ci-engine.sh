#!/usr/bin/env bash
# A Docker engine for the container tests (tests/containers) where none runs, as in CI:
#
#   eval "$(docker/ci-engine.sh start)"    # prints the exports to eval; says what it does on stderr
#   ...                                     # docker, docker-compose, make test
#   docker/ci-engine.sh stop                # removes its containers, stops the engine
#
# `start` uses an engine that already answers. Otherwise, as root, it installs Debian's
# docker.io, docker-compose and debootstrap (not with --no-install), starts dockerd
# under a temporary directory, and makes sure the image's base, python:3.11-slim, is
# there: pulled where a registry answers, else a Debian bookworm stand-in made with
# debootstrap (kept in ~/.cache/kcsim for the next run). The stand-in trusts the
# certificate authorities this host trusts, as a base image made on this network
# would, so that pip inside a plain `docker build` reaches the package index.
# It never fails its caller: where no engine can be had it says why on stderr and
# prints no exports, and the container tests skip, saying so.
set -uo pipefail

BASE_IMAGE="python:3.11-slim"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/kcsim"
say() { echo "ci-engine: $*" >&2; }

engine_answers() { timeout 20 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

install_packages() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || missing+=(docker-compose)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    say "cannot install ${missing[*]}: needs root and apt-get"
    return 0
  fi
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; } \
    || say "apt-get install ${missing[*]} failed"
}

start_dockerd() {
  command -v dockerd >/dev/null || { say "no dockerd"; return 1; }
  [ "$(id -u)" = 0 ] || { say "dockerd needs root"; return 1; }
  local dir
  dir="$(mktemp -d /tmp/kcsim-engine.XXXXXX)" || return 1
  setsid dockerd --data-root "$dir/root" --exec-root "$dir/exec" -H "unix://$dir/docker.sock" \
    --pidfile "$dir/dockerd.pid" >"$dir/dockerd.log" 2>&1 &
  export DOCKER_HOST="unix://$dir/docker.sock" KCSIM_ENGINE_DIR="$dir"
  for _ in $(seq 60); do
    engine_answers && { say "dockerd started ($DOCKER_HOST)"; return 0; }
    sleep 0.5
  done
  say "dockerd did not answer within 30 s; its log:"
  tail -n 20 "$dir/dockerd.log" >&2
  stop_engine
  return 1
}

base_image() {
  docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
  if timeout 60 docker pull -q "$BASE_IMAGE" >/dev/null 2>&1; then
    say "pulled $BASE_IMAGE"
    return 0
  fi
  local tarball="$CACHE/python-3.11-slim-standin.tar"
  if [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null || { say "no registry and no debootstrap: no $BASE_IMAGE"; return 1; }
    say "no registry answers: making a stand-in for $BASE_IMAGE with debootstrap (a few minutes)"
    local rootfs
    rootfs="$(mktemp -d /tmp/kcsim-rootfs.XXXXXX)" || return 1
    if ! debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        bookworm "$rootfs" >"$rootfs.log" 2>&1; then
      say "debootstrap failed:"; tail -n 5 "$rootfs.log" >&2
      rm -rf "$rootfs" "$rootfs.log"
      return 1
    fi
    mkdir -p "$CACHE" && tar -C "$rootfs" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$rootfs" "$rootfs.log"
  fi
  docker import - "$BASE_IMAGE-rootfs" <"$tarball" >/dev/null || return 1
  trust_host_authorities "$BASE_IMAGE-rootfs" "$BASE_IMAGE" \
    && say "imported the stand-in as $BASE_IMAGE"
}

# FROM image $1, tag $2: the host's CA bundle, and pip told to use it (pip has its own).
trust_host_authorities() {
  local bundle=/etc/ssl/certs/ca-certificates.crt dir
  dir="$(mktemp -d /tmp/kcsim-base.XXXXXX)" || return 1
  if [ -s "$bundle" ]; then
    cp "$bundle" "$dir/ca-certificates.crt"
  else
    : >"$dir/ca-certificates.crt"
  fi
  printf '[global]\ncert = %s\n' "$bundle" >"$dir/pip.conf"
  cat >"$dir/Dockerfile" <<DOCKERFILE
FROM $1
COPY ca-certificates.crt $bundle
COPY pip.conf /etc/pip.conf
DOCKERFILE
  [ -s "$bundle" ] || sed -i '/ca-certificates.crt/d' "$dir/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t "$2" "$dir" >"$dir.log" 2>&1
  local status=$?
  [ $status = 0 ] || { say "the stand-in did not build:"; tail -n 5 "$dir.log" >&2; }
  rm -rf "$dir" "$dir.log"
  return $status
}

stop_engine() {
  local dir="${KCSIM_ENGINE_DIR:-}"
  [ -n "$dir" ] && [ -f "$dir/dockerd.pid" ] || return 0
  export DOCKER_HOST="unix://$dir/docker.sock"
  local containers
  containers="$(timeout 20 docker ps -aq 2>/dev/null)"
  [ -n "$containers" ] && timeout 60 docker rm -f $containers >/dev/null 2>&1
  local pid
  pid="$(cat "$dir/dockerd.pid" 2>/dev/null)"
  if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  rm -rf "$dir" 2>/dev/null
  say "engine stopped"
}

case "${1:-}" in
  start)
    if engine_answers; then
      say "using the engine that answers${DOCKER_HOST:+ at $DOCKER_HOST}"
    else
      [ "${2:-}" = "--no-install" ] || install_packages
      start_dockerd || exit 0
      echo "export DOCKER_HOST='$DOCKER_HOST' KCSIM_ENGINE_DIR='$KCSIM_ENGINE_DIR'"
    fi
    base_image || say "the image cannot be built without $BASE_IMAGE"
    ;;
  stop)
    stop_engine
    ;;
  *)
    echo "usage: $0 start [--no-install] | stop" >&2
    exit 2
    ;;
esac
exit 0
