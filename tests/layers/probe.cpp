// Compiled by tests/layers with a frontend target's include directories and link libraries.
// MAGNETAR_PROBE_HEADER set: includes that engine-internal header, which must not be found.
// Unset: includes every public header, which must compile (the control: the probe is sound).
#ifdef MAGNETAR_PROBE_HEADER
#include MAGNETAR_PROBE_HEADER
#else
#include "magnetar/convert.h"
#include "magnetar/engine.h"
#include "magnetar/status.h"
#include "magnetar/system.h"
#include "magnetar/tools.h"
#endif

int magnetar_layers_probe() { return 0; }
