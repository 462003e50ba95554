// #endif with no #ifdef.
def X;
#endif
