#include <libxml/xmlversion.h>
/* Foundation ships its own ICU module; keep libxml2 from pulling in the system ICU headers. */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
