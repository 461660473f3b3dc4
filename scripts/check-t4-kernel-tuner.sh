#!/usr/bin/env bash
# CI check that Kernel Tuner reads liftx's T4 export: exports databases as T4 JSON and validates
# each against the T4 results schema that Kernel Tuner ships (kernel_tuner.file_utils.
# output_file_schema, the schema its own T4 writer and readers use), in a throw-away Python venv.
# Python is used here only to test interoperability; liftx itself stays Python-free.
#
#   scripts/check-t4-kernel-tuner.sh [LIFTX_BINARY]        (default build/liftx)
#
# KERNEL_TUNER_VERSION (default 1.5.0) picks the release checked against.
set -euo pipefail
cd "$(dirname "$0")/.."
liftx=${1:-build/liftx}
version=${KERNEL_TUNER_VERSION:-1.5.0}

if ! /usr/bin/python3 -m venv --help >/dev/null 2>&1 || ! dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q "install ok installed"; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends python3 python3-venv
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "kernel_tuner==$version"

# The shipped PoCL database (old rows, failures among them) and a fresh collection by this build.
"$liftx" db --db model/data/pocl.db --t4 "$work/pocl-t4.json"
"$liftx" collect stencils/jacobi2d5pt.lift --device cpu --size M=16,N=24 --sample 4 --repeat 2 \
  --quiet --db "$work/fresh.db" >/dev/null
"$liftx" db --db "$work/fresh.db" --t4 "$work/fresh-t4.json"

"$work/venv/bin/python" - "$work/pocl-t4.json" "$work/fresh-t4.json" <<'EOF'
import json
import sys

import jsonschema
from kernel_tuner.file_utils import output_file_schema

version, schema = output_file_schema("results")
failed = False
for path in sys.argv[1:]:
    with open(path) as f:
        document = json.load(f)
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    results = document.get("results", [])
    if document.get("schema_version") != version:
        print(f"{path}: schema_version {document.get('schema_version')!r}, Kernel Tuner's is {version!r}")
        failed = True
    if not results:
        print(f"{path}: no results")
        failed = True
    for e in errors[:20]:
        print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
    failed |= bool(errors)
    print(f"{path}: {len(results)} results, {len(errors)} schema errors (Kernel Tuner T4 {version})")
    # The check must be able to fail: a result whose times are not an object is refused.
    if results:
        broken = json.loads(json.dumps(document))
        broken["results"][0]["times"] = "not an object"
        if not any(True for _ in validator.iter_errors(broken)):
            print(f"{path}: the schema accepted a broken result: the check is not checking")
            failed = True
sys.exit(1 if failed else 0)
EOF
