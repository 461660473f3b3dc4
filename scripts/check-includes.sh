#!/usr/bin/env bash
# Checks the #include graph between the libraries' folders against the dependency order of
# docs/architecture.md ("Libraries and their order"): a file may include headers of its own
# library, of support/ (headers only), and of the libraries below its own. Prints each offending
# include and exits 1; exits 0 when the graph is as stated.
set -euo pipefail
cd "$(dirname "$0")/.."

# library folder -> the library folders it may include (its dependencies, transitively).
declare -A allowed=(
  [ir/arith]=""
  [ir/userfun]=""
  [ir]="ir/arith ir/userfun"
  [ir/parse]="ir ir/arith ir/userfun"
  [ir/interp]="ir ir/arith ir/userfun"
  [codegen]="ir ir/arith ir/userfun"
  [target]=""
  [runtime]="target"
  [rewrite]="ir ir/arith ir/userfun"
  [exec]="codegen runtime target ir/interp ir ir/arith ir/userfun"
  [features]="codegen target ir/interp ir ir/arith ir/userfun"
  [space]="rewrite features codegen target ir/interp ir ir/arith ir/userfun"
  [model]=""
  [synth]=""
  [perfdb]="features exec model space rewrite ir/parse codegen runtime target ir/interp ir ir/arith ir/userfun"
  [explore]="perfdb space rewrite features exec model ir/parse codegen runtime target ir/interp ir ir/arith ir/userfun"
  [explore/mpi]="explore perfdb space rewrite features exec model ir/parse codegen runtime target ir/interp ir ir/arith ir/userfun"
  [adapt]="explore perfdb space rewrite features exec model ir/parse codegen runtime target ir/interp ir ir/arith ir/userfun"
  [cli]="explore/mpi explore adapt perfdb synth space rewrite features exec model ir/parse codegen runtime target ir/interp ir ir/arith ir/userfun"
  [api]="explore adapt perfdb space rewrite features exec model ir/parse codegen runtime target ir/interp ir ir/arith ir/userfun"
)

# The library folder a path belongs to: the longest folder of the table that contains it
# (rewrite/rules/ is part of rewrite, api/include/ of api).
library_of() {
  local dir best=""
  dir=$(dirname "$1")
  for lib in "${!allowed[@]}"; do
    if [[ "$dir" == "$lib" || "$dir" == "$lib"/* ]] && ((${#lib} > ${#best})); then
      best=$lib
    fi
  done
  echo "$best"
}

status=0
while IFS= read -r file; do
  from=$(library_of "$file")
  [[ -z "$from" ]] && continue
  while IFS= read -r header; do
    [[ -f "$header" ]] || continue # a system header or a public liftx/ header of api
    [[ "$header" == support/* ]] && continue
    to=$(library_of "$header")
    [[ -z "$to" || "$to" == "$from" ]] && continue
    if [[ " ${allowed[$from]} " != *" $to "* ]]; then
      echo "$file: includes $header ($from may not depend on $to)"
      status=1
    fi
  done < <(grep -oE '^#include "[^"]+"' "$file" | sed -E 's/#include "(.*)"/\1/')
done < <(git ls-files '*.cpp' '*.hpp' | grep -vE '^(tests|bench|examples|cmake)/')
exit $status
