// include with an -I search directory (tests pass the golden folder's inc/).
include "helper.td"
def Included : FromInclude;
