#!/bin/sh
# On an empty data directory: the system tables, then the database, the user and a random root
# password from the MARIADB_* variables, applied by the server itself at its first start
# (--init-file runs before it accepts connections). Then the server, with compose's arguments.
set -eu
datadir=/var/lib/mysql
sql_quote() { printf '%s' "$1" | sed "s/\\\\/\\\\\\\\/g; s/'/\\\\'/g"; }
set -- --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 --skip-name-resolve "$@"
if [ ! -d "$datadir/mysql" ]; then
  chown mysql:mysql "$datadir"
  mariadb-install-db --user=mysql --datadir="$datadir" --skip-test-db --auth-root-authentication-method=socket >/dev/null
  init=/run/mysqld/init.sql
  root_password=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  {
    echo "ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('$root_password');"
    if [ -n "${MARIADB_DATABASE:-}" ]; then
      echo "CREATE DATABASE IF NOT EXISTS \`$MARIADB_DATABASE\`;"
    fi
    if [ -n "${MARIADB_USER:-}" ]; then
      echo "CREATE USER IF NOT EXISTS '$(sql_quote "$MARIADB_USER")'@'%' IDENTIFIED BY '$(sql_quote "${MARIADB_PASSWORD:-}")';"
      [ -z "${MARIADB_DATABASE:-}" ] || echo "GRANT ALL ON \`$MARIADB_DATABASE\`.* TO '$(sql_quote "$MARIADB_USER")'@'%';"
    fi
  } >"$init"
  chown mysql:mysql "$init"
  set -- "$@" --init-file="$init"
fi
exec mariadbd "$@"
