#!/usr/bin/env bash
# Installs the Debian packages tracelens builds and tests with; does nothing
# when all are present (so it is safe to run before every build).
set -euo pipefail
PKGS="build-essential cmake pkg-config liblmdb-dev libprotobuf-c-dev
protobuf-c-compiler liblz4-dev zlib1g-dev libisal-dev libxxhash-dev libsqlite3-dev
libzip-dev libexpat1-dev python3 python3-openpyxl python3-pandas chromium clang libclang-rt-14-dev lmdb-utils"
# Optional, not required to build or test: Open MPI enables --mpi (ingest,
# corpus-report and collective across processes under mpirun) and its test.
# TL_SETUP_MPI=1 installs it too.
if [ "${TL_SETUP_MPI:-0}" = 1 ]; then PKGS="$PKGS libopenmpi-dev openmpi-bin"; fi
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  exit 0
fi
echo "setup: installing$missing" >&2
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
