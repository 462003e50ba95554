// multiclass args
multiclass M { def A; }
defm X : M<1>;
