// foreach over lists and ranges (nested), if/then/else.
foreach i = [1, 2, 3] in def F # i { int v = i; }
foreach i = 0...2 in {
  foreach j = {4-5} in
    def G # i # _ # j { int p = !mul(i, j); }
}
foreach i = 0-1 in def H # i;
foreach x = [1, 2, 3, 4] in {
  if !eq(!and(x, 1), 0) then {
    def Even # x;
  } else {
    def Odd # x;
  }
  if !gt(x, 3) then def Big # x;
}
