// class redefined
class C { int v = 0; }
class C { int v = 1; }
