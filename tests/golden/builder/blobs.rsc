0:{"a":"$B1","b":"$B2","c":"$B3"}
2:[""]
4:ob,hello world1:["text/plain","$4"]
5:o2,xy3:["","$5"]
