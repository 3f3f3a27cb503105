#!/bin/sh
# The image's entrypoint. Its command names what to run:
#   api            the HTTP service (REST, GraphQL, the hosted page); RUN_WORKER=false beside a worker
#   worker         the background jobs (chain runners, payouts, webhooks, expiry)
#   migrate        applies pending database migrations, then exits
#   anything else  a `stablegate` CLI command, e.g. `merchant create --name Shop`
set -eu

# Settings another container wrote (the devnet profile's chain addresses), when there are any.
if [ -n "${SETTINGS_FILE:-}" ] && [ -f "$SETTINGS_FILE" ]; then
  set -a
  . "$SETTINGS_FILE"
  set +a
fi

case "${1:-api}" in
  api) exec node dist/main.js ;;
  worker) exec node dist/worker.js ;;
  migrate) exec node dist/cli/main.js migrate ;;
  *) exec node dist/cli/main.js "$@" ;;
esac
