/* The programs' speed paths (FolioToolSupport): libdeflate's gzip compression and CRC-32, and
   Google's libbrotli. Debian's libdeflate-dev and libbrotli-dev; Homebrew's libdeflate and brotli. */
#include <libdeflate.h>
#include <brotli/encode.h>
#include <brotli/decode.h>
