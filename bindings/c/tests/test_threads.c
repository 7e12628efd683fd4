#include "harness.h"
void run_threads(void) {}
