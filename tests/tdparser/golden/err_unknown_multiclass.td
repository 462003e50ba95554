// unknown multiclass
defm X : Nope;
