#!/usr/bin/env bash
# A deploy gate for CI: the pipeline waits here until a person approves.
#
#   examples/deploy-gate.sh v2.4.1
#
# Needs PAUSEPOINT_API_KEY, and PAUSEPOINT_BASE_URL unless the service is on
# http://127.0.0.1:3000. The whole gate fits on one line:
#
#   pausepoint ask "Deploy v2 to prod?" --timeout 30m --default reject && ./deploy.sh
#
# This script spells the outcomes out. `pausepoint ask` exits 0 when the first
# option is chosen, 1 for any other option or a cancel, 2 when nobody answered
# and there is no default, and 3 on an error. It prints the response link on
# stderr; with DEPLOY_APPROVERS set (an email address), it emails them too.
set -u

version="${1:?usage: deploy-gate.sh VERSION}"

deploy() {
  # Your deploy step goes here.
  echo "Deploying $version to production..."
}

notify=()
if [ -n "${DEPLOY_APPROVERS:-}" ]; then notify=(--notify "$DEPLOY_APPROVERS"); fi

pausepoint ask "Deploy $version to production?" \
  --body "Commit ${GIT_COMMIT:-unknown}, pipeline ${CI_PIPELINE_ID:-local}." \
  --option approve --option reject \
  --timeout "${DEPLOY_GATE_TIMEOUT:-30m}" --default reject \
  --metadata "version=$version" "${notify[@]}"
outcome=$?

case $outcome in
  0) deploy ;;
  1) echo "Not deploying $version: it was rejected, or nobody approved in time." >&2; exit 1 ;;
  2) echo "Not deploying $version: nobody answered in time." >&2; exit 1 ;;
  *) echo "Not deploying $version: could not ask (pausepoint exited $outcome)." >&2; exit 1 ;;
esac
