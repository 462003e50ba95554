// A multiclass may end in `;` only when it has parents.
multiclass A;
