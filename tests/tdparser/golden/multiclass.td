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
// Records made inside foreach/if of a multiclass body do not get the defm's location.
multiclass Looped<list<int> ws> {
  foreach w = ws in def _ # w : Inst<"loop", w>;
  if !gt(!size(ws), 1) then def _many : Inst<"many", 0>;
  def _direct : Inst<"direct", 0>;
}
multiclass Outer {
  foreach i = [1, 2] in defm _in # i : Widths<"o">;
  defm _l : Looped<[8]>;
}
defm LOOP : Looped<[1, 2]>;
defm OUT : Outer;
