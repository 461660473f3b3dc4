#!/usr/bin/env bash
# Copies the rows of performance databases FROM... into INTO (created by the first FROM when
# absent): programs by source hash, variants by their program's source hash and lowered text,
# configurations by their unique key, devices by key, measurements and features by
# configuration. A row INTO already has is kept; a measurement is copied once (same
# configuration, device, status, median and timestamp). Plans and per-run samples are not copied
# (a merged database is for training and analysis, not for resuming a collection), except that a
# new INTO starts as a copy of the first FROM.
# A variant's hash includes its program's row id in its own database, so a variant whose program
# has another id in FROM (planned in another order) is matched by its text, not its hash, and is
# copied once. A variant new to INTO keeps FROM's hash: if its program's id differs there, a
# collection resumed in INTO does not recognise it and measures it again.
#   scripts/merge-perf-db.sh INTO.db FROM.db...
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 INTO.db FROM.db..." >&2
  exit 2
fi
for from in "${@:2}"; do
  [[ -r $from ]] || { echo "merge-perf-db: cannot read $from" >&2; exit 2; }
done
into=$1
shift
[[ -e $into ]] || { cp "$1" "$into" && shift; }
for from in "$@"; do
  sqlite3 "$into" <<SQL
ATTACH '$from' AS o;
BEGIN;
INSERT OR IGNORE INTO programs(name, source_hash, source)
  SELECT name, source_hash, source FROM o.programs;
CREATE TEMP TABLE program_map AS
  SELECT op.id AS old_id, p.id AS new_id
  FROM o.programs op JOIN programs p ON p.source_hash = op.source_hash;
INSERT OR IGNORE INTO variants(program_id, hash, printed, strategy, parameters_json)
  SELECT pm.new_id, v.hash, v.printed, v.strategy, v.parameters_json
  FROM o.variants v JOIN temp.program_map pm ON pm.old_id = v.program_id
  WHERE NOT EXISTS (SELECT 1 FROM variants x WHERE x.program_id = pm.new_id
                    AND x.printed = v.printed);
CREATE TEMP TABLE variant_map AS
  SELECT ov.id AS old_id, min(v.id) AS new_id
  FROM o.variants ov JOIN temp.program_map pm ON pm.old_id = ov.program_id
  JOIN variants v ON v.program_id = pm.new_id AND v.printed = ov.printed
  GROUP BY ov.id;
INSERT OR IGNORE INTO configurations(variant_id, sizes_json, dims, global_json, local_json, tied)
  SELECT vm.new_id, c.sizes_json, c.dims, c.global_json, c.local_json, c.tied
  FROM o.configurations c JOIN temp.variant_map vm ON vm.old_id = c.variant_id;
CREATE TEMP TABLE config_map AS
  SELECT oc.id AS old_id, c.id AS new_id
  FROM o.configurations oc JOIN temp.variant_map vm ON vm.old_id = oc.variant_id
  JOIN configurations c ON c.variant_id = vm.new_id AND c.sizes_json = oc.sizes_json
   AND c.global_json = oc.global_json AND c.local_json = oc.local_json AND c.tied = oc.tied;
INSERT OR IGNORE INTO devices(key, name, profile_json)
  SELECT key, name, profile_json FROM o.devices;
INSERT OR IGNORE INTO features(configuration_id, profile, json)
  SELECT m.new_id, f.profile, f.json FROM o.features f JOIN temp.config_map m ON m.old_id = f.configuration_id;
CREATE TEMP TABLE measurement_map AS
  SELECT om.id AS old_id, cm.new_id AS configuration_id, d.id AS device_id
  FROM o.measurements om JOIN temp.config_map cm ON cm.old_id = om.configuration_id
  JOIN o.devices od ON od.id = om.device_id JOIN devices d ON d.key = od.key
  WHERE NOT EXISTS (SELECT 1 FROM measurements x WHERE x.configuration_id = cm.new_id
    AND x.device_id = d.id AND x.status = om.status AND x.median_ms IS om.median_ms
    AND x.timestamp = om.timestamp);
INSERT INTO measurements(configuration_id, device_id, status, median_ms, min_ms, max_ms, q1_ms,
                         q3_ms, repetitions, compile_ms, message, timestamp)
  SELECT mm.configuration_id, mm.device_id, om.status, om.median_ms, om.min_ms, om.max_ms,
         om.q1_ms, om.q3_ms, om.repetitions, om.compile_ms, om.message, om.timestamp
  FROM temp.measurement_map mm JOIN o.measurements om ON om.id = mm.old_id ORDER BY om.id;
COMMIT;
SQL
done
