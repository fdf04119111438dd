// Fills a StoreMemory with default options (32 MiB chunks, background growth) in 1 MiB spans until
// it refuses; prints how far it got and the machine's MemAvailable then.
#include <fmt/format.h>
#include <fstream>
#include <cstring>
#include <string>
#include <vector>
#include "cpu/pool.hpp"
#include "kvmgr/store_memory.hpp"
using namespace hgca;
static long mem_available_mib() {
  std::ifstream f("/proc/meminfo"); std::string k; long v = 0;
  while (f >> k >> v) { if (k == "MemAvailable:") return v / 1024; f.ignore(256, '\n'); }
  return -1;
}
int main() {
  std::shared_ptr<const cpu::Topology> topo;
  if (!cpu::Topology::from_machine(&topo)) return 3;
  std::shared_ptr<kvmgr::StoreMemory> memory;
  if (!kvmgr::StoreMemory::create(topo, kvmgr::StoreMemoryOptions{}, &memory)) return 4;
  std::vector<kvmgr::StoreSpan> spans;
  fmt::print("start: MemAvailable {} MiB\n", mem_available_mib());
  try {
    for (;;) {
      spans.push_back(memory->allocate(0, std::size_t{1} << 20));
      std::memset(spans.back().data(), 1, spans.back().bytes());
    }
  } catch (const std::bad_alloc& e) {
    fmt::print("refused after {} MiB in spans: {}\nMemAvailable then {} MiB\n", spans.size(), e.what(), mem_available_mib());
  }
  spans.clear();
  return 0;
}
