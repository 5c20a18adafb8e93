# Sourced by the other scripts: puts a Node 24 (the project's runtime) first on PATH.
# The machine's Node may be older; then Node 24 is installed from the npm registry (package node@24)
# into the git-ignored .tools/ folder, once.
capstan_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
capstan_node_dir="$capstan_root/.tools/node24/node_modules/node/bin"
capstan_node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(capstan_node_major)" -lt 24 ]; then
  if [ ! -x "$capstan_node_dir/node" ] || [ "$(capstan_node_major "$capstan_node_dir/node")" -lt 24 ]; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "capstan: Node.js 24 is required and npm is not available to install it. Install Node 24 LTS (https://nodejs.org) and retry." >&2
      exit 1
    fi
    echo "capstan: installing Node 24 into .tools/ (machine has $(node --version 2>/dev/null || echo 'no node'))" >&2
    npm install --prefix "$capstan_root/.tools/node24" --no-audit --no-fund --loglevel=error node@24 >&2 || {
      echo "capstan: could not install Node 24 from the npm registry; install Node 24 LTS and retry." >&2
      exit 1
    }
  fi
  export PATH="$capstan_node_dir:$PATH"
fi
export PATH="$capstan_root/node_modules/.bin:$PATH"
