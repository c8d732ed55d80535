#!/usr/bin/env bash
# Shared set-up steps for demo.sh and test.sh: install what is missing, start what is not running.
# Safe to run again: every step checks first.

PNPM_VERSION=12.21.0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

apt_updated=0
apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    log "please install: ${missing[*]} (no apt-get here)"; return 1
  fi
  if [ $apt_updated -eq 0 ]; then log "apt-get update"; $SUDO apt-get update -qq >/dev/null; apt_updated=1; fi
  log "apt-get install ${missing[*]} (a few minutes the first time)"
  # One line per package downloaded and set up, so a long install shows that it moves.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" \
    | awk '/^(Get:|Setting up )/ { print "    " $0; fflush() }'
}

ensure_node() {
  command -v node >/dev/null 2>&1 || { log "Node.js >= 20.19 is required"; exit 1; }
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
    || { log "Node.js >= 20.19 is required (found $(node --version))"; exit 1; }
}

ensure_pnpm() {
  if command -v pnpm >/dev/null 2>&1 && [ "$(pnpm --version 2>/dev/null)" = "$PNPM_VERSION" ]; then return 0; fi
  log "installing pnpm $PNPM_VERSION"
  npm install -g "pnpm@$PNPM_VERSION" >/dev/null 2>&1 || $SUDO npm install -g "pnpm@$PNPM_VERSION" >/dev/null
}

# Chromium for PDFs (never a downloaded browser), fonts for every diacritic of cs/de/pl/ro/tr and for emoji in names,
# build tools for better-sqlite3.
ensure_system_packages() {
  apt_install chromium fonts-noto-core fonts-noto-color-emoji fonts-dejavu-core python3 make g++ "$@"
}

# The image step of the test command (test/system/compose/run.sh): Podman (rootful, with runc and
# CNI networking whose dnsname plugin lets the services find each other by name), podman-compose,
# and debootstrap for the base image, which cannot be pulled here.
IMAGE_TEST_PACKAGES=(podman runc containernetworking-plugins golang-github-containernetworking-plugin-dnsname podman-compose debootstrap)

install_dependencies() {
  # better-sqlite3 compiles from source; Node's headers ship with Debian's nodejs in /usr/include/node.
  if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node.h ]; then export npm_config_nodedir=/usr; fi
  log "pnpm install (the first time a minute or more: better-sqlite3 is compiled)"
  # pnpm's default reporter: a progress line on a terminal, a line per step otherwise.
  pnpm install --frozen-lockfile
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

wait_port() {
  for _ in $(seq 1 60); do port_open "$1" "$2" && return 0; sleep 0.5; done
  return 1
}

ensure_redis() {
  port_open 127.0.0.1 6379 && return 0
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  log "starting Redis"
  $SUDO mkdir -p /var/lib/redis /var/log/redis
  $SUDO redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log >/dev/null
  wait_port 127.0.0.1 6379 || { log "Redis did not start"; exit 1; }
}

ensure_mariadb() {
  if ! port_open 127.0.0.1 3306; then
    command -v mariadbd >/dev/null 2>&1 || apt_install mariadb-server
    log "starting MariaDB"
    $SUDO mkdir -p /run/mysqld && $SUDO chown mysql:mysql /run/mysqld 2>/dev/null || true
    $SUDO start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql >/dev/null
    wait_port 127.0.0.1 3306 || { log "MariaDB did not start"; exit 1; }
  fi
  # Tests connect over TCP as root without a password; Debian's fresh install allows root only
  # through the local socket, so open TCP login for root@localhost (the machine's own test server).
  if command -v mariadb >/dev/null 2>&1 && ! mariadb -h 127.0.0.1 -uroot -e 'SELECT 1' >/dev/null 2>&1; then
    log "allowing root over TCP on the local MariaDB"
    $SUDO mariadb -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket" \
      || { log "cannot log in to MariaDB as root over TCP; see docs/contribute/testing.md"; exit 1; }
  fi
}
