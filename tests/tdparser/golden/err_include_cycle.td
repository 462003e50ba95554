// A file that includes itself.
include "err_include_cycle.td"
def X;
