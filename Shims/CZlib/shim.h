/* zlib, which every Apple SDK and Linux distribution ships: gzip decompression in the portable
   FolioSupport, and the deflate-stream joining and CRC of the builder's gzip (FolioToolSupport). */
#include <zlib.h>
