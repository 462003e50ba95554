// The evaluation kinds issue 12 found in LLVM's target descriptions, one program.

// A multiclass with parents and no body; its parent's argument is not type-checked (a def for
// a dag argument, as ARM's null_frag).
def ops;
class Frag;
def null_frag : Frag;
multiclass Base<int n, dag rhs> { def _x { int v = n; dag d = (ops rhs); } }
multiclass NoBody<int n> : Base<n, null_frag>;
defm Y : NoBody<1>;

// The lets around a multiclass that only inherits do not reach the parent's defs.
class WithX { int x = 0; }
multiclass HasX { def _c : WithX; }
let x = 1 in { multiclass OnlyParents : HasX; }
defm Q : OnlyParents;

// !subst with argument operands waits for the arguments.
class Strip<string s, string t> { string r = !subst(t, "", s); }
def stripped : Strip<"i8", "8">;

// A template argument whose default is the global def of the same name.
class N;
def store : N;
class Store<N op, N store = store> : N { dag d = (store op); }
def st : Store<store>;
def anon_st { N f = Store<store>; }

// A foreach iterator named like a field of the def's class.
class Sized<int s> { int Size = s; list<int> L = []; int Twice = !mul(Size, 2); }
foreach Size = [2] in {
  def sized : Sized<!mul(Size, 3)> { let L = !range(Size); }
}

// A defvar of a let block used by a multiclass defined in the same block.
let x = 1 in {
  defvar V = 5;
  multiclass UsesV { def _a : WithX { int v = V; } }
  defm R : UsesV;
}

// !cast<R>("...").field in a def name; !exists<R>(arg) in a multiclass if.
class Info<string mx> { string MX = mx; }
def V_MF4 : Info<"MF4">;
multiclass Emul<Info emul> { def "_" # emul.MX; }
defm P : Emul<!cast<Info>("V_" # "MF4")>;
class SW;
def X_W : SW;
multiclass Impl<string name> {
  if !exists<SW>(name) then def _x;
  foreach i = !if(!exists<SW>(name # "_no"), [1], [2, 3]) in def _y # i;
}
defm I : Impl<"X_W">;

// Anonymous defs of a multiclass are numbered where the multiclass is defined.
class C;
multiclass M { def : C; defm : HasX; }
defm : M;
defm : M;

// A multiclass argument's default may use NAME (AMDGPU: `string name = !tolower(NAME)`).
multiclass Named<string n> { def _a { string s = n; } }
multiclass Lower<int op, string name = !tolower(NAME)> : Named<name> { def _b { string s = name; } }
defm FOO : Lower<1>;

// A parent reference's arguments are substituted uncast (AMDGPU's VOP2eInst: -1 for bits<5>).
multiclass Sign<bits<5> op> { if !eq(op, -1) then def _neg; else def _pos; }
multiclass MinusOne : Sign<-1>;
defm S : MinusOne;
