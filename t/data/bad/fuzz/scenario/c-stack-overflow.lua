-- A tin/clusters/ the localhost preset is one node already.
return {
    model = "tiny.lua",
    cluster = { system = "localhost" } ,  
 train = { gpus = 4, tp ={{{{{{{{{{{{{{{{{{{{{{{t_gpu = 4, tp = 2 },
    sinfer = { gpus = 4, firs{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{lo;al{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{lo;al{{{{{{{{{{{{{{{{{{{{{{{{{{{{t_}
