1:R
0:{"s":"$1"}
1:T1,a1:E{"digest":"dg"}
