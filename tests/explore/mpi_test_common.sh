# Sourced by test_mpi_collect.sh and test_mpi_explore.sh: Open MPI as root, the failure message
# and the rows of a database to compare.

# Root in CI containers: Open MPI refuses to run as root unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

fail() { echo "FAIL: $*" >&2; exit 1; }

# The configuration rows of a database, one line per measured configuration with its status and
# how many times it was measured: equal files mean the same rows, no duplicates.
rows() {
  sqlite3 "$1" "SELECT p.name, c.sizes_json, v.hash, c.global_json, c.local_json, c.tied,
                       m.status, COUNT(*)
                FROM measurements m JOIN configurations c ON c.id = m.configuration_id
                JOIN variants v ON v.id = c.variant_id JOIN programs p ON p.id = v.program_id
                GROUP BY m.configuration_id, m.device_id ORDER BY 1, 2, 3, 4, 5, 6;"
}
