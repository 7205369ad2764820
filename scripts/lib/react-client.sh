# Sourced by the test stages that run React's own client (Node): Node 20
# (the engine React's client runs on; other versions word JSON.parse's
# errors otherwise) and fixtures/gen's pinned packages, installed from its
# lock file when missing (the npm registry once). Without Node 20 the
# stage says it is skipped and exits.
need_react_client() {
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none)
  if [ "$major" != 20 ]; then
    echo "$1: skipped: needs Node 20 (found: $major)"
    exit 0
  fi
  if [ ! -d fixtures/gen/node_modules/react-server-dom-webpack ]; then
    (cd fixtures/gen && npm ci --no-audit --no-fund --loglevel=error)
  fi
}
