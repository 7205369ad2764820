0:["$","div",null,{"children":"$L1"}]
1:E{"digest":"dg"}
