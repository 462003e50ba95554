// include of a file that is nowhere on the search path.
include "does_not_exist.td"
