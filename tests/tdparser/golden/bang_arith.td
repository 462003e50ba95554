// Integer and comparison bang operators.
def Arith2;
def Arith {
  int add = !add(1, 2, 3);
  int sub = !sub(10, 4);
  int mul = !mul(3, 4, 2);
  int div = !div(-7, 2);
  int and = !and(12, 10);
  int or = !or(12, 3);
  int xor = !xor(12, 10);
  int shl = !shl(1, 4);
  int sra = !sra(-16, 2);
  int srl = !srl(16, 2);
  int logtwo = !logtwo(64);
  bit not = !not(0);
  bit eq = !eq(1, 1);
  bit ne = !ne("a", "b");
  bit lt = !lt(1, 2);
  bit le = !le(2, 2);
  bit gt = !gt("b", "a");
  bit ge = !ge(1, 2);
  bit eqdef = !eq(Arith2, Arith2);
}
