#!/usr/bin/env bash
# The image step of scripts/test.sh: builds the real Dockerfile with Podman and runs
# docker-compose.yml on it (compose-topology.test.ts), with local stand-ins for the three
# third-party images. Needs podman, runc, debootstrap, podman-compose and the CNI dnsname plugin
# (scripts/lib/setup.sh installs them) and root. Extra arguments go to vitest.
# Cold (nothing in the Podman store) it makes the base image first; the base, the stand-ins and
# the image's layers stay in the store, so a rerun rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/../../.."
export CONTAINERS_CONF="$PWD/test/system/compose/containers.conf"
here=test/system/compose
logs=.tmp/image-test
mkdir -p "$logs"

step() { printf '    %s\n' "$*" >&2; }
timed() {
  # timed <log name> <command...>: the command's output in $logs/<name>.log, shown if it fails.
  local name=$1 started=$SECONDS
  shift
  if "$@" >"$logs/$name.log" 2>&1; then
    step "$name: $((SECONDS - started)) s"
  else
    tail -n 60 "$logs/$name.log" >&2
    step "$name failed (log: $logs/$name.log)"
    return 1
  fi
}

# The stack's containers, volumes and network go, whatever happens (the test removes them too;
# this is for a run killed mid-way). compose.env, when the test made it, goes as well.
made_env=0
standins=
cleanup() {
  local status=$?
  local ids
  [ -z "$standins" ] || kill "$standins" 2>/dev/null || true
  ids=$(podman ps -a -q --filter label=io.podman.compose.project=logi-image-test 2>/dev/null || true)
  [ -z "$ids" ] || podman rm -f -t 5 $ids >/dev/null 2>&1 || true
  ids=$(podman volume ls -q --filter label=io.podman.compose.project=logi-image-test 2>/dev/null || true)
  [ -z "$ids" ] || podman volume rm -f $ids >/dev/null 2>&1 || true
  podman network rm -f logi-image-test_default >/dev/null 2>&1 || true
  [ "$made_env" -eq 0 ] || rm -f compose.env
  exit $status
}
trap cleanup EXIT

timed base-image bash "$here/base-image.sh"
# build <tag> <log name> <podman build arguments...>: Docker's format, which keeps a HEALTHCHECK (OCI
# images have none). The image the tag named before goes once nothing uses it.
build() {
  local tag=$1 name=$2 previous current
  shift 2
  previous=$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
  timed "$name" podman build --format docker -t "$tag" "$@"
  current=$(podman image inspect --format '{{.Id}}' "$tag")
  if [ -n "$previous" ] && [ "$previous" != "$current" ]; then podman rmi "$previous" >/dev/null 2>&1 || true; fi
}
# The stand-ins build beside the image: they mostly download and unpack Debian's packages.
(
  build localhost/logi-image-test-mariadb:latest stand-in-mariadb "$here/standins/mariadb"
  build localhost/logi-image-test-redis:latest stand-in-redis "$here/standins/redis"
  build localhost/logi-image-test-s3:latest stand-in-s3 -f "$here/standins/s3/Containerfile" .
) &
standins=$!
# The real Dockerfile, under the tag docker-compose.yml gives it, with the host's caches mounted
# into its RUN steps as BuildKit's cache mounts would be (the Dockerfile stays as it is): pnpm's
# store, which the test command's `pnpm install` has just filled from the same lockfile, and apt's
# downloaded packages (the host's Chromium and fonts). Nothing of them lands in the image.
pnpm_store=$(pnpm store path)
mkdir -p "$pnpm_store" /var/cache/apt/archives/partial
build logistics-api:latest image -v "$(dirname "$pnpm_store"):/root/.local/share/pnpm/store" -v /var/cache/apt/archives:/var/cache/apt/archives .
wait "$standins"
step "image logistics-api:latest: $(($(podman image inspect --format '{{.Size}}' logistics-api:latest) / 1048576)) MiB"

# docker-compose.yml reads compose.env (the operator's, git-ignored): a checkout without one gets
# the test's for the run. With one, the override's env_file (read after it) sets every variable.
if [ ! -f compose.env ]; then
  cp "$here/compose.test.env" compose.env
  made_env=1
fi

started=$SECONDS
pnpm -s exec vitest run --config "$here/vitest.config.ts" "$@"
step "compose test: $((SECONDS - started)) s"
