/* CEmberMemory is header-only (static inline functions Swift imports and inlines); this file
 * exists because a C target needs a source. */
#include "CEmberMemory.h"
