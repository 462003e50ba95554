// Reached only through an -I directory: the include names it with a leading '/'.
#ifndef SLASHED_TD
#define SLASHED_TD
class FromSlashed<int n> { int N = n; }
#endif
