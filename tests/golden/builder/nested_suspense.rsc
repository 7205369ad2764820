1:"$Sreact.suspense"
0:["$","$1",null,{"fallback":null,"children":"$L2"}]
2:["$","section",null,{"children":"$L3"}]
3:["$","em",null,{"children":"inner"}]
