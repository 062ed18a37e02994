#include <zlib.h>
#include <libdeflate.h>
#ifdef __linux__
/* mallopt(3), for the Builder's allocator settings (BatchMemory). */
#include <malloc.h>
#endif
/* glibc declares syncfs(2) only under _GNU_SOURCE, which Swift's Glibc module does not set. */
#ifdef __linux__
extern int syncfs(int fd);
#endif
