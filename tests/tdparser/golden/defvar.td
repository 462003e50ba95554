// defvar at top level, in records and in loops.
defvar base = 10;
defvar names = ["a", "b"];
def V1 { int x = base; defvar local = !mul(base, 2); int y = local; }
foreach n = names in {
  defvar up = !toupper(n);
  def V_ # n { string u = up; }
}
