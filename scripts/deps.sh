#!/bin/sh
# Install kloop's dependencies on Debian 12 (as root, idempotent): the -dev
# packages from Debian, then the pinned tree-sitter runtime and CUDA grammar
# from the npm registry (grammars/package-lock.json, scripts not run).
# python3-torch (CPU) is for KernelBench problem files on the host backend
# and their tests; the GPU's PyTorch comes with the GPU machine.  chromium
# renders `kloop report`'s page headless in the tests.
set -eu
cd "$(dirname "$0")/.."
PKGS="build-essential pkg-config clang-format clang libclang-rt-dev bubblewrap slurmctld slurmd slurm-client munge libncurses-dev libedit-dev libcurl4-openssl-dev libcjson-dev libsqlite3-dev tmux python3 python3-torch libtorch-dev chromium"
# npm: the machine's own Node.js where there is one, else Debian's
command -v npm >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
if [ ! -f grammars/node_modules/.package-lock.json ] ||
   ! cmp -s grammars/package-lock.json grammars/node_modules/.kloop-lock; then
	(cd grammars && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
	cp grammars/package-lock.json grammars/node_modules/.kloop-lock
fi
echo "kloop: dependencies are installed"
