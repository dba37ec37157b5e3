// ThreadPool::default_threads() on Windows: the physical cores that intersect this process's
// affinity mask (SMT siblings add nothing to a bandwidth-bound decode).
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <vector>

#include "core/thread_pool.h"

namespace magnetar {

int ThreadPool::default_threads() {
  DWORD_PTR process_mask = 0, system_mask = 0;
  if (!GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask))
    process_mask = ~static_cast<DWORD_PTR>(0);
  DWORD bytes = 0;
  GetLogicalProcessorInformation(nullptr, &bytes);
  std::vector<SYSTEM_LOGICAL_PROCESSOR_INFORMATION> info(bytes / sizeof(SYSTEM_LOGICAL_PROCESSOR_INFORMATION) + 1);
  if (bytes == 0 || !GetLogicalProcessorInformation(info.data(), &bytes)) {
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors > 0 ? static_cast<int>(si.dwNumberOfProcessors) : 1;
  }
  int cores = 0;
  const size_t n = bytes / sizeof(SYSTEM_LOGICAL_PROCESSOR_INFORMATION);
  for (size_t i = 0; i < n; ++i)
    if (info[i].Relationship == RelationProcessorCore && (info[i].ProcessorMask & process_mask) != 0)
      ++cores;
  return cores > 0 ? cores : 1;
}

}  // namespace magnetar
