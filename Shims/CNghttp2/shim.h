// libnghttp2 (Debian's libnghttp2-dev): the edge's HTTP/2 frame layer, HPACK and stream states.
#include <nghttp2/nghttp2.h>
