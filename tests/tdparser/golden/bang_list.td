// List bang operators.
def L {
  list<int> cat = !listconcat([1], [2, 3], []);
  list<string> splat = !listsplat("x", 3);
  list<int> rem = !listremove([1, 2, 3, 2], [2]);
  int head = !head([7, 8]);
  list<int> tail = !tail([7, 8, 9]);
  int size = !size([1, 2, 3]);
  bit empty = !empty([]<int>);
  list<int> range1 = !range(4);
  list<int> range2 = !range(2, 5);
  list<int> range3 = !range(0, 10, 3);
  list<int> rangel = !range(["a", "b"]);
  list<int> fe = !foreach(x, [1, 2, 3], !mul(x, x));
  list<int> fi = !filter(x, [1, 2, 3, 4], !eq(!and(x, 1), 0));
  int fold = !foldl(0, [1, 2, 3, 4], acc, x, !add(acc, x));
  list<string> nested = !foreach(s, ["a", "b"], !strconcat(s, s));
}
