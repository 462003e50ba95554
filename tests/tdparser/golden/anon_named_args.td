// Anonymous class instances are made once per argument list as written (llvm-tblgen uniques
// VarDefInit by its ArgumentInits): named vs positional, the order of named arguments and an
// omitted vs an explicit default each make a new record; equal values written alike share one.
class S<string mx, bit isF = 0, bit isW = 0> { string m = mx; bit f = isF; bit w = isW; }
def a { S x = S<"M1", isF=1>; }
def b { S x = S<"M1", 1>; }
def c { S x = S<"M1", isF=1>; }
def d { S x = S<"M1", 1, 0>; }
def e { S x = S<"M1", isW=0, isF=1>; }
def f { S x = S<"M1", isF=1, isW=0>; }
def g { S x = S<"M1", isF=true>; }
def h { S x = S<"M1">; }
def i { S x = S<"M1", 0>; }
def j { list<S> l = [S<"M1", isW=0, isF=1>, S<"M1">, S<"M2", isF=0>]; }
