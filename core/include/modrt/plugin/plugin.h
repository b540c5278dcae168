// The C++ side of a modrt backend plugin: header-only, compiled into each
// plugin DSO, calling the core only through the ModrtCoreApi table it was
// given (plugin_api.h). Nothing here is exported or imported: the namespace
// is hidden, so a plugin built with another compiler or standard library
// (clang + libc++) works with a gcc/libstdc++ core. C++ exceptions stay
// inside the plugin; GuardCall turns them into the C error convention.
//
// A plugin defines its registrations in one function and names it with
// MODRT_DEFINE_PLUGIN(init), which defines the one exported entry point.
//
// What a plugin author includes; the parts, by concern, are in this folder.
#ifndef MODRT_PLUGIN_H_
#define MODRT_PLUGIN_H_

#include "modrt/abi/plugin_api.h"
#include "modrt/plugin/common.h"
#include "modrt/plugin/device_registration.h"
#include "modrt/plugin/errors.h"
#include "modrt/plugin/export.h"
#include "modrt/plugin/module.h"
#include "modrt/plugin/values.h"

#endif  // MODRT_PLUGIN_H_
