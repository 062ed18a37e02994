// GitHub's CommonMark implementation (Debian's libcmark-gfm-dev, libcmark-gfm-extensions-dev):
// Markdown to HTML for documents whose project rule asks for `html`.
#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>
