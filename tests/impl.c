/* tests/impl.c - the library's implementation, compiled once for the tests that need no internal name
   (test_json, test_ops, test_dpops and the result checker link it, float and double builds): the header
   is not compiled again for each of them */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"
