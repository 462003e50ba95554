// Dag bang operators.
def ins; def outs; def add;
def X;
def D {
  dag con = !con((ins X:$a), (ins X:$b));
  dag mk = !dag(add, [1, 2], ["x", "y"]);
  dag mknames = !dag(outs, [X, X], [?, "z"]);
  int getarg = !getdagarg<int>((ins 1:$a, 2:$b), "b");
  int getargi = !getdagarg<int>((ins 1:$a, 2:$b), 0);
  string getname = !getdagname((ins 1:$a, 2:$b), 1);
  dag setop = !setdagop((ins X:$a), outs);
  dag setarg = !setdagarg((ins 1:$a, 2:$b), "a", 9);
  dag setname = !setdagname((ins 1:$a), 0, "q");
  string op = !cast<string>(!getdagop((ins 1)));
  int n = !size((ins 1, 2));
  bit e = !empty((ins));
  dag fe = !foreach(v, (ins 1, "s"), v);
}
