#!/usr/bin/env bash
# Adds pausepoint to Claude Code, with the key and service in your environment:
#   PAUSEPOINT_API_KEY=svc_test_... PAUSEPOINT_BASE_URL=http://127.0.0.1:3000 examples/mcp/claude-code.sh
# (--scope user makes it available in every project; the default is this one.)
set -euo pipefail
: "${PAUSEPOINT_API_KEY:?set PAUSEPOINT_API_KEY to your pausepoint key}"

# Over stdio: Claude Code starts `pausepoint mcp` itself.
claude mcp add --transport stdio \
  --env PAUSEPOINT_API_KEY="$PAUSEPOINT_API_KEY" \
  --env PAUSEPOINT_BASE_URL="${PAUSEPOINT_BASE_URL:-http://127.0.0.1:3000}" \
  pausepoint -- pausepoint mcp

# Or, with nothing to install where Claude Code runs, over HTTP to the service's /mcp:
#   claude mcp add --transport http --header "Authorization: Bearer $PAUSEPOINT_API_KEY" \
#     pausepoint "$PAUSEPOINT_BASE_URL/mcp"
