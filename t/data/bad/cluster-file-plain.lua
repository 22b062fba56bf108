-- A plain table, not built by cluster.system.
return { name = "plain", gpus_per_node = 8 }
