// An include name that starts with '/' is still searched under each -I directory
// (llvm-tblgen appends it to the directory rather than treating it as absolute).
include "/sub/slashed.td"
include "//sub/slashed.td"
def UsesSlashed : FromSlashed<3>;
