// The 1.0 headers lay the plugin wrapper at modrt/plugin.h; sources written
// for today's layout include modrt/plugin/plugin.h. This one line maps the
// new path onto the frozen header, which stays unchanged.
#include "modrt/plugin.h"
