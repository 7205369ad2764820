1:I["app/Cart.js",["cart","cart.3d05.js"],"AddToCart"]
2:"$Sreact.suspense"
0:["$","main",null,{"children":[["$","h1",null,{"children":"Lamp"}],["$","$L1",null,{"sku":"A-100","price":19.5}],["$","$2",null,{"fallback":"Loading reviews...","children":"$L3"}],["$","$2",null,{"fallback":"Checking stock...","children":"$L4"}]]}]
3:["$","ul",null,{"children":[["$","li",null,{"children":"Bright and warm."}],["$","li",null,{"children":"$$5 well spent"}]]}]
4:E{"digest":"stock-timeout"}
