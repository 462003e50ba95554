// defset collects defs (in order) into a global list.
class Item<int n> { int num = n; }
defset list<Item> Items = {
  def I1 : Item<1>;
  foreach k = [2, 3] in def I # k : Item<k>;
}
def Count { int n = !size(Items); list<Item> all = Items; int second = Items[1].num; }
