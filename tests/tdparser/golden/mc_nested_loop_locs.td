// A record made in a loop over a nested multiclass's arguments gets no location from the defms
// whose multiclass leaves that loop unresolved (RISCV's VC_FV: one location, not two).
class R<int k> { int v = k; }
multiclass Inner<int t> {
  if !eq(t, 1) then { def NAME : R<t>; } else { def NAME : R<0>; }
  def _plain : R<t>;
  foreach i = !if(!eq(t, 1), [1, 2], [3]) in def _l # i : R<i>;
}
multiclass Outer<int u> {
  defm VC_ # NAME : Inner<u>;
  defm Fixed_ # NAME : Inner<1>;
}
multiclass Par<int p> : Inner<p>;
defm X : Outer<1>;
defm Y : Outer<2>;
defm Z : Par<1>;
