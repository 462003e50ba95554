// A parent multiclass reference substitutes its arguments uncast (an int 1 for a bit); a class
// instance inside that multiclass that passes the argument on (`S<mx, isW>`) then holds the
// int, so it is a different record from `S<mx, 1>`, whose 1 was cast to bit when parsed.
class S<string mx, bit isW = 0> { string m = mx; bit w = isW; }
class Use<S s> { S sv = s; }
multiclass Inner<string mx, bit isW> { def _i : Use<S<mx, isW>>; }
multiclass Impl<string mx, bit isW = 0> {
  def _a : Use<S<mx, isW>>;
  defm _n : Inner<mx, isW>;
}
multiclass Wide<string mx> : Impl<mx, 1>;
multiclass WideNamed<string mx> : Impl<mx, isW=1>;
defm W : Wide<"M1">;
defm V : WideNamed<"M1">;
defm I : Impl<"M1", 1>;
def lit : Use<S<"M1", 1>>;
foreach mx = ["M1", "M2"] in
  def lp # mx : Use<S<mx, 1>>;
