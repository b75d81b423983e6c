#!/usr/bin/env bash
# Set up naiveopt on a fresh Debian machine with Python 3.11, then run the main job:
# optimize every kernel of kernels/naive/ into out/ and verify each against its naive input
# on the CPU OpenCL runtime (PoCL, installed from PyPI with the other dependencies).
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
    echo "setup: installing python3-venv with apt" >&2
    apt-get update -qq && apt-get install -y -qq python3-venv
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
# PoCL's LLVM 14 rejects CPUs newer than itself (Zen 5: "unknown target CPU 'generic'");
# this names such a CPU by its x86-64 level instead, and does nothing where PoCL builds.
.venv/bin/python -m naiveopt.verify.pocl_cpu

echo "setup: optimizing and verifying kernels/naive/ -> out/" >&2
.venv/bin/naiveopt kernels/naive/ -o out/ --json > out.json.tmp || status=$?
mkdir -p out && mv out.json.tmp out/summary.json
.venv/bin/python -m naiveopt.summary out/summary.json
exit "${status:-0}"
