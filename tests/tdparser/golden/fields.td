// `field` marks a field allowed to stay unresolved (listed in !fields); assert passes.
class F { field bits<4> Inst; field int x = 3; int y = 2; }
def FF : F { assert !eq(y, 2), "y must be 2"; }
assert !eq(1, 1), "top-level assert";
deftype IntList = list<int>;
def T { IntList l = [1, 2]; }
