1:{"id":"app/actions.js#save","bound":null}
2:{"id":"app/actions.js#save","bound":"$@3"}
4:{"id":"app/actions.js#other","bound":null}
0:{"a":"$h1","again":"$h1","b":"$h2","c":"$h4"}
3:[1,"x"]
