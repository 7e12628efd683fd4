#include "harness.h"
void run_listeners(void) {}
