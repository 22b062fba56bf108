/* The `refit.yaml` Lua module: a YAML document (an RL framework's config, NeMo RL's or
 * verl's) decoded with libyaml into Lua tables, with the line of every key. */
#ifndef RF_YAML_LUA_H
#define RF_YAML_LUA_H

struct lua_State;

/* refit.yaml.decode(text, name) -> doc, lines. doc: mappings as tables keyed by string,
 * sequences as lists, plain scalars typed (integer, number, boolean, refit.yaml.null),
 * quoted scalars strings. lines: dotted key path ("policy.megatron_cfg.tensor_model_
 * parallel_size", list items by index: "a.1") -> the 1-based line it was written on.
 * A YAML error raises "<name>:<line>: column <c>: <problem>". */
int rf_luaopen_yaml(struct lua_State *L);

#endif
