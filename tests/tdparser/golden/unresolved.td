// Values that stay symbolic: `var`, `varbit` and `complex` JSON kinds.
class U { int x; string s; bits<2> b; }
def Sym : U {
  field int y = x;
  field bits<2> c = b;
  field string t = !strconcat(s, "!");
  field bits<3> mixed = {1, b{1}, 0};
}
