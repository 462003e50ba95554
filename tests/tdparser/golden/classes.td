// Classes with template arguments, defaults, inheritance order and field overrides.
class Base<int v = 1> { int value = v; string kind = "base"; }
class Mid<string k> : Base<2> { let kind = k; bit flag = 0; }
class Other { int other = 7; }
class Leaf<string k, int extra = !add(3, 4)> : Mid<k>, Other {
  int total = !add(value, extra);
  let flag = 1;
}
def A : Leaf<"leaf">;
def B : Leaf<"leaf2", 10> { let other = 8; }
def C : Base;
def D : Base<5>, Other;
class Fwd;
class Fwd { int f = 1; }
def E : Fwd;
class NamedArgs<int a = 1, int b = 2> { int sum = !add(a, b); }
def F : NamedArgs<b = 10>;
class SelfName { string n = NAME; }
def G : SelfName;
