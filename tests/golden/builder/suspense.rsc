1:"$Sreact.suspense"
0:["$","$1",null,{"fallback":"loading","children":"$L2"}]
2:["$","b",null,{"children":"late"}]
