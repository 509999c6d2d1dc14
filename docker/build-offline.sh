#!/usr/bin/env bash
# Build the image where a build cannot reach a package index (the container has no
# route to one, or does not trust its certificate): kcsim is built into a wheel and
# its dependencies are downloaded as wheels for the image's Python (3.11, this
# machine's architecture) into docker/wheels/, from which the Dockerfile installs.
#   docker/build-offline.sh [TAG] [docker build options...]
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-kcsim}"
shift || true
python="${PYTHON:-python3}"
rm -rf docker/wheels && mkdir -p docker/wheels
"$python" -m pip wheel --quiet --no-deps . -w docker/wheels
"$python" -m pip download --quiet --dest docker/wheels --only-binary=:all: \
  --python-version 3.11 --implementation cp --abi cp311 \
  --platform "manylinux2014_$(uname -m)" --platform "manylinux_2_17_$(uname -m)" \
  docker/wheels/kcsim-*.whl
docker build -f docker/Dockerfile -t "$tag" "$@" .
