// !if, !cond, !cast, !isa, !exists, !subst on records.
class Shape { string n = ""; }
class Circle : Shape;
def Sq : Shape;
def Ci : Circle;
def M {
  int if1 = !if(1, 10, 20);
  string if2 = !if(!eq(1, 2), "y", "n");
  string cond = !cond(!lt(5, 3): "small", !lt(5, 10): "medium", true: "large");
  Shape cast = !cast<Shape>("Ci");
  bit isa1 = !isa<Circle>(Ci);
  bit isa2 = !isa<Circle>(Sq);
  bit ex1 = !exists<Shape>("Sq");
  bit ex2 = !exists<Shape>("Nope");
  Shape subst = !subst(Sq, Ci, Sq);
  int bits2int = !cast<int>(0b101);
}
