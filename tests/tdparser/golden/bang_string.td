// String bang operators.
def Str2;
def Str {
  string cat = !strconcat("a", "b", "c");
  string sub = !subst("o", "0", "foo boo");
  string substr = !substr("abcdef", 1, 3);
  string tail = !substr("abcdef", 2);
  int find = !find("abcabc", "c", 3);
  int find0 = !find("abc", "z");
  string low = !tolower("AbC");
  string up = !toupper("AbC");
  string inter = !interleave(["x", "y", "z"], ", ");
  string interi = !interleave([1, 2], "-");
  int size = !size("hello");
  bit empty = !empty("");
  string repr = !repr([1, 2]);
  string cast = !cast<string>(42);
  string castdef = !cast<string>(Str2);
}
