// A let whose value does not fit the field type.
class C { int v = 0; }
def X : C { let v = "text"; }
