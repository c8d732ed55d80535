#!/bin/sh
# The official image's healthcheck.sh, for the two checks the compose file asks: --connect (the
# server answers a query) and --innodb_initialized (InnoDB is up). Root over the local socket.
set -eu
for check in "$@"; do
  case "$check" in
    --connect) mariadb --protocol=socket -uroot -N -e 'SELECT 1' >/dev/null ;;
    --innodb_initialized)
      [ "$(mariadb --protocol=socket -uroot -N -e "SELECT 1 FROM information_schema.ENGINES WHERE ENGINE='InnoDB' AND SUPPORT IN ('YES','DEFAULT')")" = 1 ] ;;
    *) echo "healthcheck.sh: unknown check $check" >&2; exit 2 ;;
  esac
done
