0:["$","div",null,{"className":"a","children":["x",["$","span","k",{"children":"y"}],["$","i","$$k",{}]]}]
