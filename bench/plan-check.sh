# Sourced by bench/mpi-collect.sh and bench/mpi-scaling.sh.
# measured_once DB PLANNED: prints ok when DB's measurements are exactly its planned
# configurations (PLANNED of them), each measured once on any device, else FAILED.
measured_once() {
  sqlite3 "$1" "
    SELECT CASE WHEN
      (SELECT COUNT(*) FROM measurements) = $2 AND
      (SELECT COUNT(DISTINCT configuration_id) FROM measurements) = $2 AND
      NOT EXISTS (SELECT configuration_id FROM plan_configurations
                  EXCEPT SELECT configuration_id FROM measurements)
    THEN 'ok' ELSE 'FAILED' END;"
}
