// #ifdef never closed.
#ifdef FOO
def X;
