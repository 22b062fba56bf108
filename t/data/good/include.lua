-- A model file that is another model file.
return include("qwen3-8b")
