#include "harness.h"
void run_queries(void) {}
