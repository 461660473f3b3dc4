# Sourced by the bench scripts that read measured variants. resolve_data_folder SPEC sets
# data_folder to SPEC when it is a folder; for ARCHIVE.tar.xz[:FOLDER] (an archive of data/), to
# FOLDER inside the archive (its top folder without FOLDER), unpacked into a temporary folder
# that is removed when the script exits.
resolve_data_folder() {
  data_folder=$1
  case $1 in
  *.tar.xz | *.tar.xz:*)
    local archive=${1%%:*} inner=${1#"${1%%:*}"}
    data_tmp=$(mktemp -d) && trap 'rm -rf "$data_tmp"' EXIT
    tar xJf "$archive" -C "$data_tmp" || exit 2
    data_folder=$data_tmp/$(basename "$archive" .tar.xz)/${inner#:}
    ;;
  esac
}
