#!/bin/sh
# The image's entrypoint, and its `stablegate` command (docker compose exec api-1 stablegate …).
# Its first argument names what to run:
#   api            the HTTP service (REST, GraphQL, the hosted page); RUN_WORKER=false beside a worker
#   worker         the background jobs (chain runners, payouts, webhooks, expiry)
#   migrate        applies pending database migrations, prints them, then exits
#   anything else  a `stablegate` CLI command, e.g. `merchant create --name Shop`
set -eu

# Settings the devnet's setup wrote (docker-compose.devnet.yml sets SETTINGS_FILE; production never
# does). A line only fills a variable the environment leaves unset: a file left behind by a devnet
# trial can never override what the operator set.
if [ -n "${SETTINGS_FILE:-}" ] && [ -f "$SETTINGS_FILE" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      '' | '#'*) continue ;;
    esac
    name=${line%%=*}
    case "$name" in
      *[!A-Za-z0-9_]* | [0-9]*) echo "stablegate: $SETTINGS_FILE: not a NAME=value line, ignored" >&2; continue ;;
    esac
    if eval "[ -z \"\${$name+set}\" ]"; then
      export "$name=${line#*=}"
    fi
  done <"$SETTINGS_FILE"
fi

case "${1:-api}" in
  api) exec node dist/main.js ;;
  worker) exec node dist/worker.js ;;
  migrate) exec node dist/cli/main.js migrate ;;
  *) exec node dist/cli/main.js "$@" ;;
esac
