// MachineMemory (see machine_memory.hpp): /proc/meminfo and the cgroup's files, read into a buffer
// on the stack.
#include "kvmgr/machine_memory.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace hgca::kvmgr {

namespace {

/// A cgroup limit at or past this is v1's way of saying none.
constexpr unsigned long long kNoCgroupLimit = 1ULL << 62;

/// The file's first buf.size() bytes; empty where it cannot be read.
template <std::size_t N>
std::string_view read_file(const char* path, std::array<char, N>& buf) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::size_t n = 0;
  for (ssize_t r = 0; n < N && (r = ::read(fd, buf.data() + n, N - n)) > 0;) n += static_cast<std::size_t>(r);
  ::close(fd);
  return {buf.data(), n};
}

/// The number after `key` where `key` starts a line (or a "Node N " prefix, in a node's meminfo),
/// or the text's first number (key empty); nullopt where there is none ("max": no limit).
std::optional<unsigned long long> number_after(std::string_view text, std::string_view key) noexcept {
  std::size_t at = 0;
  if (!key.empty()) {
    auto starts_line = [&](std::size_t i) { return i == 0 || text[i - 1] == '\n' || text[i - 1] == ' '; };
    at = text.find(key);
    while (at != std::string_view::npos && !starts_line(at)) at = text.find(key, at + 1);
    if (at == std::string_view::npos) return std::nullopt;
    at += key.size();
  }
  while (at < text.size() && text[at] == ' ') ++at;
  unsigned long long v = 0;
  const auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), v);
  if (ec != std::errc{}) return std::nullopt;
  return v;
}

std::optional<unsigned long long> file_number(const char* path, std::string_view key = {}) noexcept {
  std::array<char, 8192> buf;  // memory.stat and /proc/meminfo take 1-2 KiB
  return number_after(read_file(path, buf), key);
}

bool exists(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

}  // namespace

MachineMemory::MachineMemory() : MachineMemory(Files{}) {}

MachineMemory::MachineMemory(Files files) : meminfo_(std::move(files.meminfo)), nodes_(std::move(files.nodes)) {
  // v1's controller mount and v2's root, then the process's own cgroup under each with every cgroup
  // above it: a parent's limit holds for its children. /proc/self/cgroup names it, "0::/path" for
  // v2 and "N:controllers:/path" for v1's hierarchy with "memory" among its controllers (a path
  // that is not there, such as a container's host-side path, is skipped).
  std::vector<std::string> dirs = {files.cgroup_root + "/memory", files.cgroup_root};
  auto add_path = [&](const std::string& mount, std::string_view path) {
    if (path.size() < 2) return;  // "/": the mount itself
    for (std::size_t slash = path.find('/', 1); slash != std::string_view::npos; slash = path.find('/', slash + 1)) {
      dirs.push_back(mount + std::string(path.substr(0, slash)));
    }
    dirs.push_back(mount + std::string(path));
  };
  auto has_memory = [](std::string_view controllers) {
    for (std::size_t at = 0; at <= controllers.size();) {
      const std::size_t end = std::min(controllers.find(',', at), controllers.size());
      if (controllers.substr(at, end - at) == "memory") return true;
      at = end + 1;
    }
    return false;
  };
  std::array<char, 4096> buf;
  std::string_view self = read_file(files.self_cgroup.c_str(), buf);
  for (std::size_t at = 0; at < self.size();) {
    const std::size_t end = std::min(self.find('\n', at), self.size());
    const std::string_view line = self.substr(at, end - at);
    at = end + 1;
    const std::size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    if (line.starts_with("0::")) {
      add_path(files.cgroup_root, path);
    } else if (has_memory(controllers)) {
      add_path(files.cgroup_root + "/memory", path);
    }
  }
  // Every node's MemTotal ("Node 0 MemTotal: … kB").
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(nodes_, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("node") || name.find_first_not_of("0123456789", 4) != std::string::npos || name.size() == 4) continue;
    std::array<char, 8192> text;
    nodes_total_bytes_ += static_cast<std::size_t>(
        number_after(read_file((entry.path() / "meminfo").c_str(), text), "MemTotal:").value_or(0) * 1024);
  }
  for (const std::string& dir : dirs) {
    if (exists(dir + "/memory.max")) {
      cgroups_.push_back({dir + "/memory.max", dir + "/memory.current", dir + "/memory.stat", "inactive_file"});
    } else if (exists(dir + "/memory.limit_in_bytes")) {
      cgroups_.push_back({dir + "/memory.limit_in_bytes", dir + "/memory.usage_in_bytes", dir + "/memory.stat",
                          "total_inactive_file"});
    }
  }
}

std::size_t MachineMemory::physical_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

std::size_t MachineMemory::usable_bytes() const {
  std::size_t bytes = physical_bytes();
  for (const Cgroup& c : cgroups_) {
    const unsigned long long limit = file_number(c.limit.c_str()).value_or(0);
    if (limit > 0 && limit < kNoCgroupLimit && (bytes == 0 || limit < bytes)) bytes = static_cast<std::size_t>(limit);
  }
  return bytes;
}

std::size_t MachineMemory::available_bytes() const noexcept {
  std::size_t bytes = SIZE_MAX;
  if (const auto kib = file_number(meminfo_.c_str(), "MemAvailable:")) bytes = static_cast<std::size_t>(*kib) * 1024;
  for (const Cgroup& c : cgroups_) {
    const unsigned long long limit = file_number(c.limit.c_str()).value_or(0);
    if (limit == 0 || limit >= kNoCgroupLimit) continue;
    const unsigned long long usage = file_number(c.usage.c_str()).value_or(0);
    const unsigned long long cache = file_number(c.stat.c_str(), c.inactive_file_key).value_or(0);
    const unsigned long long used = usage > cache ? usage - cache : 0;
    bytes = std::min<std::size_t>(bytes, limit > used ? static_cast<std::size_t>(limit - used) : 0);
  }
  return bytes;
}

std::size_t MachineMemory::node_available_bytes(int os_index) const noexcept {
  std::array<char, 512> path{};
  const auto r = fmt::format_to_n(path.data(), path.size() - 1, "{}/node{}/meminfo", nodes_, os_index);
  if (r.size >= path.size()) return SIZE_MAX;
  std::array<char, 8192> buf;
  const std::string_view text = read_file(path.data(), buf);
  const auto free_kib = number_after(text, "MemFree:");
  if (!free_kib) return SIZE_MAX;
  return static_cast<std::size_t>(*free_kib + number_after(text, "Inactive(file):").value_or(0)) * 1024;
}

}  // namespace hgca::kvmgr
