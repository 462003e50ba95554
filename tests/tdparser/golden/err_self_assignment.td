// self assignment
class C { int v = v; }
