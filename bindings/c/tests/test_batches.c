#include "harness.h"
void run_batches(void) {}
