/* glibc declarations that Swift's Glibc module leaves out; header-only, and a dependency on Linux
   only (Package.swift), so Apple platforms never see it. */
#ifdef __linux__
/* mallopt(3), for the Builder's allocator settings (BatchMemory). */
#include <malloc.h>
/* glibc declares syncfs(2) only under _GNU_SOURCE, which Swift's Glibc module does not set. */
extern int syncfs(int fd);
/* The CPUs this process may run on (its affinity, as nproc counts them); 0 when unknown.
   sched_getaffinity and CPU_COUNT are _GNU_SOURCE too: declared here, counted by hand. */
extern int sched_getaffinity(int pid, unsigned long size, void *mask);
static inline int folio_allowed_cpus(void) {
    unsigned long mask[16] = {0};  /* 1024 CPUs, as glibc's cpu_set_t */
    if (sched_getaffinity(0, sizeof mask, mask) != 0) return 0;
    int n = 0;
    for (int i = 0; i < 16; i++) n += __builtin_popcountl(mask[i]);
    return n;
}
#endif
