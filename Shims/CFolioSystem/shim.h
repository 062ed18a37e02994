#include <zlib.h>
#include <libdeflate.h>
/* glibc declares syncfs(2) only under _GNU_SOURCE, which Swift's Glibc module does not set. */
#ifdef __linux__
extern int syncfs(int fd);
#endif
