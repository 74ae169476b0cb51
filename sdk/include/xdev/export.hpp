// XDEV_API marks the symbols libxdev exports; everything else is hidden.
#pragma once

#if defined(XDEV_BUILDING_CORE) && (defined(__GNUC__) || defined(__clang__))
#define XDEV_API __attribute__((visibility("default")))
#else
#define XDEV_API
#endif
