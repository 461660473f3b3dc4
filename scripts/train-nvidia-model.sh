#!/usr/bin/env bash
# Trains the NVIDIA model from the tracked databases (model/data and archives of data/) and
# ships it (model/data/nvidia-model.json) only if the ship rule holds: judged on the regression
# suite (model/data/nvidia-suite.db.xz, every kind of program the space makes, none of it in the
# training data; and the fused steps' inputs at 8192² x 64 measured on an H100,
# data/h100-fused-steps with data/h100-warp-streams-32-lanes), it is no worse than the model it
# replaces on any kind (`liftx evaluate --model NEW --baseline OLD`; model/ship_rule.hpp).
# Otherwise the new model is left beside the old one (OUTPUT.refused) and the script fails.
# Two steps. The base: boosted trees on log2 of the normalised throughput, depth 6, every feature
# column (the recipe the nested evaluations chose, docs/results.md), trained on the 2D stencils:
# the H100 dataset and every H200 measurement of them not at 8192^2 (the 8192^2 broad search is
# the suite's). Then its routes (`liftx route`, model/routes.hpp): the same recipe trained on all
# of that plus the H200 measurements of the training programs of the other kinds
# (model/data/programs: reductions, products, time steps, 3D, multi-output) takes each kind the
# base never saw where, its programs held out in turn, it ranked them better than the base. Each
# database's stored features are first recomputed by this liftx (`db --refresh-features`), as the
# model sees variants when it ranks.
# With --add-route KIND (repeatable), the base is not retrained: the shipped model keeps its base
# and every route it has, and only KIND is judged and, where the specialist wins held out, routed
# (`liftx route --add-route`). A retrained base's 2D first picks within 95% move with the
# boosting seed (3, 1 and 5 of 8 at seeds 1-3 against the shipped base's 6; docs/results.md, "3D
# stencils at 512³"), so the ship rule refuses most retrained bases: a kind is added this way.
# With --route-bag N (only beside --add-route), the route judged for those kinds is not a
# specialist trained on every kind but the base's recipe retrained on the 2D stencils alone as a
# bag of N boosters (`--boost-seeds N`): it never saw the judged kinds' programs, so `liftx route
# --route-model` judges it on them as it is.
# With --against-base (only beside --add-route), those kinds are judged against the base without
# their routes, as a full run judges every kind, and their routes are dropped (`liftx route
# --against-base`): a route that trained on every program of its kind, as the time-steps route
# has, leaves none unseen to judge a retrained one against it, and the suite then decides.
# Usage: scripts/train-nvidia-model.sh [--add-route KIND ...] [--route-bag N] [--against-base]
#        [LIFTX] [OUTPUT] [BASELINE]
# (from anywhere; default build/liftx, model/data/nvidia-model.json, and the shipped
# model/data/nvidia-model.json as the baseline, whatever OUTPUT is: a new file is judged against
# what ships)
set -euo pipefail
add_routes=()
route_bag=0
against_base=()
while [[ $# -gt 0 && ( $1 == --add-route || $1 == --route-bag || $1 == --against-base ) ]]; do
  if [[ $1 == --against-base ]]; then
    against_base=(--against-base)
    shift
    continue
  fi
  [[ $# -ge 2 ]] || { echo "train-nvidia-model: $1 needs a value" >&2; exit 2; }
  if [[ $1 == --add-route ]]; then
    add_routes+=(--add-route "$2")
  else
    [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "train-nvidia-model: --route-bag needs a count" >&2; exit 2; }
    route_bag=$2
  fi
  shift 2
done
if [[ $route_bag -gt 0 && ${#add_routes[@]} -eq 0 ]]; then
  echo "train-nvidia-model: --route-bag judges a route for the kinds of --add-route; name them" >&2
  exit 2
fi
if [[ ${#against_base[@]} -gt 0 && ${#add_routes[@]} -eq 0 ]]; then
  echo "train-nvidia-model: --against-base judges the kinds of --add-route; name them" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
liftx=$(realpath "${1:-$here/build/liftx}")
out=$(realpath -m "${2:-$here/model/data/nvidia-model.json}")
baseline=$(realpath "${3:-$here/model/data/nvidia-model.json}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for archive in h200-window-4096 h200-windows-4096x8192 h200-top-of-space h200-product-training \
               h200-products-local-tiles h200-3d-512-training h100-3d-256-training \
               h100-fused-steps h100-warp-streams-32-lanes h100-synth-kinds; do  # data/README.md
  tar xJf "$here/data/$archive.tar.xz" -C "$work"
done
declare -A sources=(
  [h100.db]=$here/model/data/nvidia.db.xz                                 # 2D suite 512²-8192², synthetic stencils
  [h200.db]=$here/model/data/nvidia-h200.db.xz                            # 2048², 4096², 2048x8192, 8192x2048
  [h200-windows-4096.db]=$work/h200-window-4096/h200-window-4096.db.xz   # 2,000 windows at 4096²
  [h200-windows-4096x8192.db]=$work/h200-windows-4096x8192/h200-window-4096x8192.db.xz
  [h200-top.db]=$work/h200-top-of-space/top.db.xz                          # three models' top 50
  [h200-kinds.db]=$here/model/data/nvidia-kinds.db.xz                     # reductions, products, steps
  [h200-products.db]=$work/h200-product-training/train-products.db.xz    # atb, l1dist; abt, sqdist at K=256
  [h200-products-local.db]=$work/h200-products-local-tiles/train-products-local.db.xz # their local tiles
  [h200-3d-512.db]=$work/h200-3d-512-training/train-3d-512.db.xz         # 3D training programs at 512³
  [h100-3d-256.db]=$work/h100-3d-256-training/train-3d-256.db.xz         # the five of them at 256³
  [h100-steps.db]=$work/h100-fused-steps/train-steps.db.xz               # 64 steps at 4096², warp streams
  [h100-synth-kinds.db]=$work/h100-synth-kinds/synth-kinds.db.xz         # synth --kind: 3D, reductions, ...
  [suite.db]=$here/model/data/nvidia-suite.db.xz                          # judged on, never trained on
  [h100-steps-suite.db]=$work/h100-fused-steps/suite-steps.db.xz         # judged on too: 64 steps at 8192²
)
# Every 32-lane warp stream of the same programs (the first collection drew lanes 24 to 29 only),
# merged into their pools: a program's variants judged or held out together.
declare -A warp_streams=(
  [h100-steps.db]=$work/h100-warp-streams-32-lanes/warp-train-steps.db.xz
  [h100-steps-suite.db]=$work/h100-warp-streams-32-lanes/warp-suite-steps.db.xz
)
for name in h100.db h200.db h200-windows-4096.db h200-windows-4096x8192.db h200-top.db \
            h200-kinds.db h200-products.db h200-products-local.db h200-3d-512.db h100-3d-256.db \
            h100-steps.db h100-synth-kinds.db suite.db h100-steps-suite.db; do
  xz -dc "${sources[$name]}" > "$work/$name"
  if [[ -n ${warp_streams[$name]:-} ]]; then
    xz -dc "${warp_streams[$name]}" > "$work/more-$name"
    "$here/scripts/merge-perf-db.sh" "$work/$name" "$work/more-$name" > /dev/null
  fi
  "$liftx" db --db "$work/$name" --refresh-features nvidia
done
cd "$work"
recipe=(--profile nvidia --kind boosted --transform log --boost-depth 6 --features all)
stencils_2d=(--db h100.db --add-db h200.db --add-db h200-windows-4096.db
             --add-db h200-windows-4096x8192.db --add-db h200-top.db)
if [[ ${#add_routes[@]} -eq 0 ]]; then
  "$liftx" train "${stencils_2d[@]}" "${recipe[@]}" -o base.json
else
  cp "$baseline" base.json
fi
route_model=()
if [[ $route_bag -gt 0 ]]; then
  "$liftx" train "${stencils_2d[@]}" "${recipe[@]}" --boost-seeds "$route_bag" -o route-bag.json
  route_model=(--route-model route-bag.json)
fi
"$liftx" route --base base.json "${add_routes[@]}" "${against_base[@]}" "${route_model[@]}" \
  "${stencils_2d[@]}" \
  --add-db h200-kinds.db --add-db h200-products.db --add-db h200-products-local.db \
  --add-db h200-3d-512.db --add-db h100-3d-256.db --add-db h100-steps.db \
  --add-db h100-synth-kinds.db "${recipe[@]}" \
  -o candidate.json
status=0
# The suite, then the fused steps' inputs at 8192² x 64 measured on an H100 (warp streams among
# them; a database of its own: the suite's measurements are an H200's).
for judged in suite.db h100-steps-suite.db; do
  "$liftx" evaluate --db "$judged" --profile nvidia --model candidate.json --baseline "$baseline" ||
    status=$?
  [[ $status -eq 0 ]] || break
done
if [[ $status -eq 1 ]]; then # the ship rule refused it (exit 2 and others: it could not judge)
  cp candidate.json "$out.refused"
  echo "train-nvidia-model: the new model is worse than $baseline on some kind;" \
    "left at $out.refused" >&2
  exit 1
elif [[ $status -ne 0 ]]; then
  echo "train-nvidia-model: the suite could not be judged (exit $status); nothing shipped" >&2
  exit "$status"
fi
cp candidate.json "$out.tmp"
mv "$out.tmp" "$out"
echo "shipped $out"
