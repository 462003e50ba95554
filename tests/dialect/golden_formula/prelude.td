// Shared by the golden formula files: a user dialect whose op class has a `formula` field.
include "tdflow/Base.td"

def Fx_Dialect : Dialect {
  let name = "fx";
  let summary = "formula golden tests";
}

class Fx_Op<string mnemonic, list<Trait> traits = []>
    : TDF_Op<mnemonic, !listconcat(traits, [NoMemoryEffect, Elementwise])> {
  let opDialect = Fx_Dialect;
  code formula = ?;
}
