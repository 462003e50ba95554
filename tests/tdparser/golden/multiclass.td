// Multiclasses: NAME, nested defm, inheritance, extra classes, anonymous defm.
class Inst<string m, int w> { string mnemonic = m; int width = w; }
class Tag { bit tagged = 1; }
multiclass Widths<string m> {
  def _32 : Inst<m, 32>;
  def _64 : Inst<m, 64>;
}
multiclass Named<string m> {
  def NAME : Inst<m, 0>;
  def NAME # _alt : Inst<!strconcat(m, ".alt"), 1>;
}
multiclass Nested<string m> {
  defm _w : Widths<m>;
  defm NAME : Named<m>;
}
multiclass Derived<string m> : Widths<m> {
  def _128 : Inst<m, 128>;
}
defm ADD : Widths<"add">;
defm SUB : Nested<"sub">, Tag;
defm MUL : Derived<"mul">;
defm : Widths<"anon">;
let width = 99 in defm DIV : Widths<"div">;
