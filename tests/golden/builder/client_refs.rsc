1:I["app/Button.js",["main","main.3f2a.js"],"Button"]
2:"app/widgets/Counter.js"
3:"widgets.0123456789.js"
4:I["$2",["widgets","$3"],"default"]
5:I["app/Async.js",[],"Thing",1]
0:["$","main",null,{"children":[["$","$L1",null,{"label":"one"}],["$","$L4",null,{}],["$","$L1",null,{"label":"two","of":"$1"}],["$","$L5",null,{}],["$","$L4",null,{}]]}]
