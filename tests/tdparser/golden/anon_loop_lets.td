// Class instances held by a let (or a defvar) around a defm: in a multiclass body's loop they
// are made when llvm-tblgen expands the loop at the definition (RISCV's GetVTypePredicates);
// in a top-level loop before the renaming of the record's anonymous name (RISCV's WriteRes).
class Preds<int v> { list<int> P = [v]; }
class IntOf<int v> { int I = !add(v, 1000); }
class Pat<int a> { int x = a; list<int> Predicates = []; }
multiclass OnePat<int a> { def : Pat<a>; }
multiclass Conv<string n> {
  foreach v = [1, 2] in {
    defvar iv = IntOf<v>.I;
    let Predicates = !listconcat(Preds<v>.P, Preds<iv>.P) in
    defm : OnePat<iv>;
  }
}
defm c : Conv<"c">;
class Cycles<int m> { int c = !mul(m, 2); }
class WR<int w> { int W = w; int Latency = 0; list<int> Rel = []; }
multiclass WRes<int w> { def : WR<w>; }
foreach m = [1, 2, 4] in {
  defvar C = Cycles<m>.c;
  let Latency = 4, Rel = [1, !add(1, C)] in
  defm "" : WRes<m>;
}
