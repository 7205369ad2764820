0:["$","div",null,{"a":{"a":1},"b":"$0:props:a","children":["$0:props:a"]}]
