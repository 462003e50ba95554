// let unknown field
class C { int v = 0; }
def X : C { let w = 1; }
