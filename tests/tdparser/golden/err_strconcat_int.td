// strconcat int
def X { string s = !strconcat("a", 1); }
