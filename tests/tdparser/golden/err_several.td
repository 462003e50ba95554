// Several independent errors are all reported.
class C<int n> { assert !gt(n, 0), "n must be positive"; }
def X : C<0>;
def Y : C<-1>;
