#pragma once
/// Where liftx keeps what it learns about devices (program binaries, roofline measurements), and
/// crash-safe file writes for it.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace liftx::runtime {

/// `$LIFTX_CACHE_DIR`, else `$XDG_CACHE_HOME/liftx`, else `$HOME/.cache/liftx`, else
/// `/tmp/liftx-cache`. Not created here.
std::filesystem::path default_cache_dir();

/// The file's bytes, or nullopt if it cannot be read.
std::optional<std::string> read_file_bytes(const std::filesystem::path& path);

/// Writes `bytes` to a temporary file beside `path` and renames it over `path`, so readers see
/// either the old or the new content, never a partial file. Creates parent folders. Returns false
/// (and leaves no temporary file) on failure: caches are best-effort.
bool write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// A 128-bit content hash as 32 hex digits (two independent 64-bit FNV-1a style hashes); stable
/// across runs and machines. Not cryptographic.
std::string content_hash(std::string_view bytes);

} // namespace liftx::runtime
