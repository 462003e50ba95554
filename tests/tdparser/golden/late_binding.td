// Fields referring to other fields resolve after every let, as llvm-tblgen does.
class Base {
  int width = 8;
  int doubled = !mul(width, 2);
  string name = "w" # width;
  list<int> ws = [width, doubled];
}
def Default : Base;
def Wide : Base { let width = 32; }
let width = 64 in def Wider : Base;
class Enc { bits<4> op; bits<8> Inst; let Inst{3-0} = op; let Inst{7-4} = 0b1111; }
def E1 : Enc { let op = 5; }
def E2 : Enc;
