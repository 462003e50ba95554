// duplicate superclass
class A; class B : A, A;
