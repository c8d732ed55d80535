#!/usr/bin/env bash
# Quick start: installs what is missing, loads the demo data into the embedded
# profile (SQLite, local files, in-process jobs) and starts the API.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

ensure_node
ensure_pnpm
ensure_system_packages
install_dependencies

log "loading demo data"
pnpm -s cli fixtures:load fixtures/demo.json

host=${HOST:-127.0.0.1}
port=${PORT:-3000}
cat <<MSG

Demo data loaded. Try, in another terminal:

  curl -s 'http://$host:$port/v1/invoices?per_page=2&sort_by=amount_gross' \\
    -H 'Authorization: Bearer demo-key-baltic' -H 'X-Client-Directory: baltic-haulage'

  curl -s -o invoice.pdf 'http://$host:$port/v1/invoices/100001/pdf?lang=pl' \\
    -H 'Authorization: Bearer demo-key-baltic' -H 'X-Client-Directory: baltic-haulage'

  curl -s -o invoice.xml 'http://$host:$port/v1/invoices/100010/e-invoice?format=ubl' \\
    -H 'Authorization: Bearer demo-key-baltic' -H 'X-Client-Directory: baltic-haulage'

  curl -s -o invoice-facturx.pdf 'http://$host:$port/v1/invoices/100001/pdf?lang=pl&format=facturx' \\
    -H 'Authorization: Bearer demo-key-baltic' -H 'X-Client-Directory: baltic-haulage'

Starting the API on http://$host:$port (Ctrl+C stops it).
MSG
exec pnpm -s start
