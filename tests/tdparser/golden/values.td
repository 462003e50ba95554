// Literal forms: ?, ints, strings, code, lists, dags, bits, slices, anonymous records.
class Op<string n> { string name = n; }
def ins; def outs;
def X : Op<"x">;
class P<int a> { int a_ = a; }
def Values {
  int dec = 42; int hex = 0x1F; int bin = 0b101; int neg = -7;
  string esc = "tab\there \"q\" back\\slash";
  string adj = "con" "cat" "enated";
  code c = [{ some code; }];
  bit unset = ?;
  bits<4> b4 = {1, 0, ?, 1};
  bits<8> b8 = 0xA5;
  bits<3> slice = b8{7-5};
  bits<2> swap = {b8{0}, b8{1}};
  list<int> li = [1, 2, 3];
  list<string> ls = []<string>;
  list<int> typed = [4, 5]<int>;
  int second = li[1];
  list<int> sl = li[0, 2];
  list<int> sr = li[0...1];
  dag d = (ins X:$a, 3:$b, "s", $c);
  dag nested = (outs (ins):$x);
  dag opname = (ins:$op X);
  Op anon = Op<"anon">;
  Op anon2 = Op<"anon">;
  string f = X.name;
  string paste = "a" # "b" # 5;
  list<int> lpaste = [1] # [2];
  P anonp = P<3>;
  bit t = true;
  bit fa = false;
}
def 2Digits { int v = 2; }
def 3_x#4b { bits<4> b = 0b0110; }
