// ThreadPool::default_threads() on Linux: the physical cores among the CPUs this process may run
// on (SMT siblings share one core's load ports, so they add nothing to a bandwidth-bound decode).
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <utility>

#include "core/thread_pool.h"

namespace magnetar {
namespace {

bool read_int(const char* path, int* out) {
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  const bool ok = std::fscanf(f, "%d", out) == 1;
  std::fclose(f);
  return ok;
}

}  // namespace

int ThreadPool::default_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? static_cast<int>(online) : 1;
  }
  std::set<std::pair<int, int>> cores;  // (package, core)
  int logical = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    ++logical;
    char path[128];
    int package = 0, core = 0;
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
    const bool have_package = read_int(path, &package);
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
    if (!have_package || !read_int(path, &core)) return logical > 0 ? CPU_COUNT(&set) : 1;
    cores.insert({package, core});
  }
  const int physical = static_cast<int>(cores.size());
  return physical > 0 ? physical : 1;
}

}  // namespace magnetar
