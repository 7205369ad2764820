1:"$Sreact.x"
0:[null,true,false,0,"$-0",1.5,1e+21,-2.5e-7,"$NaN","$Infinity","$-Infinity","$undefined","a","$$x","","é\n\" ","$n12345678901234567890","$n-5","$D1970-01-01T00:00:00.000Z","$1"]
