-- cluster.sytem is a typo of cluster.system.
return cluster.sytem{
    name = "broken",
}
