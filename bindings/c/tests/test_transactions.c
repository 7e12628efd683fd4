#include "harness.h"
void run_transactions(void) {}
