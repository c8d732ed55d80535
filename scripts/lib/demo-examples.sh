#!/usr/bin/env bash
# The ready-to-paste commands demo.sh prints: the demo data's keys, orders and invoices, the
# sample files the repository ships (fixtures/samples), the address the API and its metrics
# listen on (HOST, PORT, METRICS_HOST, METRICS_PORT as the API reads them).
# test/api/quick-start.test.ts runs each printed command against a server with the demo data.

# An address curl can reach: a wildcard listen address means this machine.
demo_url_host() {
  case "$1" in
    0.0.0.0 | '') echo 127.0.0.1 ;;
    :: | '[::]') echo '[::1]' ;;
    \[*) echo "$1" ;;
    *:*) echo "[$1]" ;;
    *) echo "$1" ;;
  esac
}

print_demo_examples() {
  local root host port metrics_host metrics_port base auth samples
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  host=$(demo_url_host "${HOST:-127.0.0.1}")
  port=${PORT:-3000}
  metrics_host=$(demo_url_host "${METRICS_HOST:-127.0.0.1}")
  metrics_port=${METRICS_PORT:-9464}
  base="http://$host:$port/v1"
  auth="-H 'Authorization: Bearer demo-key-baltic' -H 'X-Client-Directory: baltic-haulage'"
  samples="$root/fixtures/samples"

  cat <<MSG
Try, in another terminal (demo keys of the client directory baltic-haulage):

  # Invoices, two per page, largest first
  curl -s '$base/invoices?per_page=2&sort_by=amount_gross' \\
    $auth

  # The order whose number holds 0412 (BH/2026/0412, id 3001)
  curl -s '$base/orders/by-nr?nr=0412' \\
    $auth

  # File categories, then a CMR scan (category 1) and a delivery note (category 2) attached to order 3001
  curl -s '$base/orders/file-categories' \\
    $auth
  curl -s -F 'files=@$samples/cmr.pdf' -F category_id=1 '$base/orders/3001/files' \\
    $auth
  curl -s -F 'files=@$samples/delivery-note.jpg' -F category_id=2 '$base/orders/3001/files' \\
    $auth

  # An invoice as PDF (Polish), as an EN 16931 e-invoice (UBL) and as Factur-X
  curl -s -o invoice.pdf '$base/invoices/100001/pdf?lang=pl' \\
    $auth
  curl -s -o invoice.xml '$base/invoices/100010/e-invoice?format=ubl' \\
    $auth
  curl -s -o invoice-facturx.pdf '$base/invoices/100001/pdf?lang=pl&format=facturx' \\
    $auth

MSG
  if [ "$metrics_port" != 0 ]; then
    cat <<MSG
  # Prometheus metrics (a listener of their own; METRICS_PORT=0 turns it off)
  curl -s 'http://$metrics_host:$metrics_port/metrics'

MSG
  fi
  cat <<MSG
API documentation: http://$host:$port/v1/docs (Swagger UI), http://$host:$port/v1/openapi.json
MSG
}

# Run directly, it prints the commands (for HOST, PORT, METRICS_HOST and METRICS_PORT from the environment).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then print_demo_examples; fi
