// #define / #ifdef / #ifndef / #else / #endif, nested, with -D FROM_CMDLINE.
#define LOCAL
#ifdef LOCAL
def HasLocal;
#else
def NoLocal;
#endif
#ifndef FROM_CMDLINE
def NoCmdline;
#else
def Cmdline;
#endif
#ifdef UNDEFINED
  #ifdef LOCAL
  def Never;
  #endif
#else
def Nested;
#endif
