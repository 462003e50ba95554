class FromInclude { string origin = "inc/helper.td"; }
