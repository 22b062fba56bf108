#!/bin/sh
# End to end: the Lua sandbox (sim/sandbox.c, models/lib/sandbox.lua, file.lua). Endless
# loops and memory bombs in any description, unreadable paths (devices, FIFOs, directories,
# oversized files) and error values that are not strings each end in one line naming the
# file and line, exit status 1, and no database.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/never.db
# A limit that does not trigger would hang the suite: give up after two minutes instead.
limit=
command -v timeout >/dev/null && limit="timeout 120"
fails() { # fails NAME "MESSAGE" DESCRIPTION ARGS...: refit ARGS exits 1 with MESSAGE
    name=$1 want=$2 what=$3
    shift 3
    $limit "$REFIT" "$@" >/dev/null 2>"$tmp/$name.err"
    is "$?:$(cat "$tmp/$name.err")" "1:refit: $want" "$what"
}
scenario() { # scenario FILE MODEL CLUSTER [EXTRA LINES]: a small scenario, model on line 3
    printf -- '-- %s\nreturn {\n    model = %s,\n    cluster = %s,\n' "$1" "$2" "$3" >"$tmp/$1"
    printf '    train = { gpus = 8, tp = 4, pp = 2 },\n' >>"$tmp/$1"
    printf '    infer = { gpus = 8, first_gpu = 8, tp = 2 },\n%s}\n' "${4:-}" >>"$tmp/$1"
}
qwen='"qwen3-8b"'
h100='{ system = "dgx-h100", nodes = 2 }'
steps="more than 100 million Lua instructions (the limit of one description load or study \
step; an endless loop?)"
memory="more than 256 MiB of Lua memory"

# Instructions: per load, per policy, in model and cluster files, through constructors.
printf -- '-- an endless loop\nlocal n = 0\nwhile true do n = n + 1 end\n' >"$tmp/loop.lua"
fails loop "$tmp/loop.lua:3: $steps" "an endless loop in a scenario names its line" \
    plan "$tmp/loop.lua" --db "$db"
scenario policy-loop.lua "$qwen" "$h100" '    strategy = "hybrid",
    policy = function(tensor) while true do end end,
'
fails policy-loop "$tmp/policy-loop.lua:8: $steps" \
    "an endless hybrid policy is stopped at its line" plan "$tmp/policy-loop.lua" --db "$db"
printf -- '-- a model file\nlocal x = 0\nwhile x >= 0 do x = x + 1 end\nreturn x\n' \
    >"$tmp/model-loop.lua"
scenario uses-model-loop.lua '"model-loop.lua"' "$h100"
fails model-loop "$tmp/model-loop.lua:3: $steps" "an endless model file names its own line" \
    plan "$tmp/uses-model-loop.lua" --db "$db"
printf -- '-- a cluster file\nrepeat until false\n' >"$tmp/cluster-loop.lua"
scenario uses-cluster-loop.lua "$qwen" '{ system = "cluster-loop.lua", nodes = 2 }'
fails cluster-loop "$tmp/cluster-loop.lua:2: $steps" \
    "an endless cluster file names its own line" plan "$tmp/uses-cluster-loop.lua" --db "$db"
cat >"$tmp/constructors.lua" <<'LUA'
-- the loop runs mostly inside the library's constructor: the user's line is reported
local m; for i = 1, 1e12 do m = transformer.dense{ name = "t", family = "llama", hidden = 64, layers = 2, vocab = 100, intermediate = 128, attention = { kind = "gqa", heads = 4 } } end
return m
LUA
scenario uses-constructors.lua '"constructors.lua"' "$h100"
fails constructors "$tmp/constructors.lua:2: $steps" \
    "a loop of constructor calls names the user's line, not the library's" \
    plan "$tmp/uses-constructors.lua" --db "$db"

# Pattern matching runs in C, where the count hook never fires: sim/lua_match.c charges its
# steps to the same budget. Each of these takes Lua's own matcher minutes (issue 25).
bad=$SRCDIR/t/data/bad
pattern() { # pattern WHAT FILE LINE FUNCTION DESCRIPTION ARGS...
    what=$1 file=$2 line=$3 fn=$4 desc=$5
    shift 5
    fails "$what" "$bad/$file:$line: $fn: more than 100 million Lua instructions and \
pattern-matching steps (the limit of one description load or study step; a pattern that \
backtracks without end?)" "$desc" "$@"
}
pattern find pattern-find.lua 4 string.find "a backtracking find in a scenario names its line" \
    plan "$bad/pattern-find.lua" --db "$db"
pattern policy-gsub pattern-policy.lua 9 string.gsub \
    "a backtracking gsub in a hybrid policy names its line" sim "$bad/pattern-policy.lua" --db "$db"
pattern profile-match pattern-profile.lua 2 string.match \
    "a backtracking match in a framework profile file names that file's line" \
    plan "$bad/pattern-uses-profile.lua" --db "$db"
pattern search-find pattern-find.lua 4 string.find "refit search stops the same scenario" \
    search "$bad/pattern-find.lua"
pattern study-gmatch pattern-study.lua 4 string.gmatch "a backtracking gmatch in a study names its line" \
    run "$bad/pattern-study.lua" --db "$tmp/pattern-study.db"

# A message that quotes the input's control bytes is one line with them escaped: nothing
# reaches the terminal that it would act on.
fails control "$bad/control-bytes.lua:4: bad \\x1B[2Jqwen3-8b second line" \
    "an error's escape sequence and line break are written \\xNN and a space" \
    plan "$bad/control-bytes.lua" --db "$db"

# Memory: a table bomb, one huge string.
printf -- '-- a table bomb\nlocal t = {}\nfor i = 1, 1e12 do t[i] = { i } end\n' >"$tmp/bomb.lua"
fails bomb "$tmp/bomb.lua:3: $memory in use (the limit)" \
    "a table bomb stops at the memory limit and names its line" sim "$tmp/bomb.lua" --db "$db"
printf -- '-- one huge string\nlocal s = string.rep("x", 1 << 30)\n' >"$tmp/rep.lua"
fails rep "$tmp/rep.lua:2: $memory (the limit)" "one huge allocation is refused at its line" \
    plan "$tmp/rep.lua" --db "$db"

# A study's budget is per step: two loops of 60 million instructions around a plan pass,
# an endless loop after it does not.
scenario small.lua "$qwen" "$h100"
cat >"$tmp/study-steps.lua" <<'LUA'
local n = 0
for i = 1, 3e7 do n = n + i end
local r = refit.plan("small.lua")
for i = 1, 3e7 do n = n + i end
print(r.run_id, n)
LUA
$limit "$REFIT" run "$tmp/study-steps.lua" --db "$tmp/study.db" >"$tmp/steps.out" 2>&1
is "$?:$(cat "$tmp/steps.out")" "0:1	900000030000000" \
    "a study gets a fresh instruction budget after each plan"
printf 'refit.plan("small.lua")\nwhile true do end\n' >"$tmp/study-loop.lua"
fails study-loop "$tmp/study-loop.lua:2: $steps" "an endless study is stopped at its line" \
    run "$tmp/study-loop.lua" --db "$tmp/study.db"

# Files: one reader, which refuses devices, FIFOs, directories and files over 16 MiB.
scenario zero.lua "$qwen" '{ system = "/dev/zero", nodes = 2 }'
fails zero "$tmp/zero.lua:4: cluster.system: /dev/zero: is not a regular file" \
    "a device as cluster file is refused without reading it" plan "$tmp/zero.lua" --db "$db"
scenario zero-model.lua '"/dev/zero"' "$h100"
fails zero-model "$tmp/zero-model.lua:3: model: /dev/zero: is not a regular file" \
    "a device as model file is refused" plan "$tmp/zero-model.lua" --db "$db"
mkdir "$tmp/dir.lua" "$tmp/dir.json"
fails dir "$tmp/dir.lua: is a directory" "a directory as scenario is named as such" \
    plan "$tmp/dir.lua" --db "$db"
scenario dir-model.lua '"dir.lua"' "$h100"
fails dir-model "$tmp/dir-model.lua:3: model: $tmp/dir.lua: is a directory" \
    "a directory as model file names the scenario's line" plan "$tmp/dir-model.lua" --db "$db"
scenario dir-json.lua '"dir.json"' "$h100"
fails dir-json "$tmp/dir-json.lua:3: model: $tmp/dir.json: is a directory" \
    "a directory as config.json names the scenario's line" plan "$tmp/dir-json.lua" --db "$db"
scenario dir-cluster.lua "$qwen" '{ system = "dir.lua", nodes = 2 }'
fails dir-cluster "$tmp/dir-cluster.lua:4: cluster.system: $tmp/dir.lua: is a directory" \
    "a directory as cluster file names the scenario's line" plan "$tmp/dir-cluster.lua" --db "$db"
dd if=/dev/zero of="$tmp/big.lua" bs=1 count=0 seek=16777217 2>/dev/null
scenario big-model.lua '"big.lua"' "$h100"
fails big "$tmp/big-model.lua:3: model: $tmp/big.lua: is 16777217 bytes, more than the 16 MiB \
refit reads" "a file over 16 MiB is refused" plan "$tmp/big-model.lua" --db "$db"
if mkfifo "$tmp/fifo.lua" 2>/dev/null; then
    fails fifo "$tmp/fifo.lua: is not a regular file" "a FIFO is refused without blocking" \
        plan "$tmp/fifo.lua" --db "$db"
else
    echo "ok $((n += 1)) # SKIP mkfifo is not available"
fi
fails missing "$tmp/none.lua: no such file or directory" "a missing scenario is named" \
    plan "$tmp/none.lua" --db "$db"

# Error values: anything error() is given becomes one line with the place it was raised.
printf -- '-- error with a table\nerror({ code = 1 })\n' >"$tmp/error-table.lua"
fails error-table "$tmp/error-table.lua:2: error object is a table (error() should be given \
a string)" "error({}) names its line" plan "$tmp/error-table.lua" --db "$db"
scenario error-policy.lua "$qwen" "$h100" '    strategy = "hybrid",
    policy = function(tensor) error(nil) end,
'
fails error-policy "$tmp/error-policy.lua:8: error object is nil (error() should be given a \
string)" "error(nil) in a policy names the policy's line" plan "$tmp/error-policy.lua" --db "$db"
printf -- '-- a model file\nerror(42)\n' >"$tmp/error-number.lua"
scenario uses-error-number.lua '"error-number.lua"' "$h100"
fails error-number "$tmp/error-number.lua:2: error object is the number 42 (error() should be \
given a string)" "error(42) in a model file names that file" \
    plan "$tmp/uses-error-number.lua" --db "$db"
printf -- '-- no level\nerror("two\\nlines", 0)\n' >"$tmp/error-level.lua"
fails error-level "$tmp/error-level.lua:2: two lines" \
    "error(text, 0) gains its place and stays one line" plan "$tmp/error-level.lua" --db "$db"
printf 'local x = 1\nerror({})\n' >"$tmp/error-study.lua"
fails error-study "$tmp/error-study.lua:2: error object is a table (error() should be given a \
string)" "a study's error({}) names the study's line" run "$tmp/error-study.lua" --db "$tmp/study.db"

# Sizes that wrap int64: refused by the C bridge before the planner, which crashed on them
# (heap corruption, SIGSEGV); models/lib may refuse them first, so only the form is checked.
for f in first-gpu-overflow model-size-overflow staging-overflow; do
    file=$SRCDIR/t/data/bad/fuzz/scenario/$f.lua
    $limit "$REFIT" plan "$file" --db "$db" >/dev/null 2>"$tmp/$f.err"
    st=$?
    is "$st:$(wc -l <"$tmp/$f.err" | tr -d ' '):$(cut -c1-$((${#file} + 7)) "$tmp/$f.err")" \
        "1:1:refit: $file" "$f: one line naming the file, exit 1, no crash"
done

# Lua writes a chunk name longer than 60 bytes as "..." and its tail in its own messages:
# a syntax error, a runtime error, error("text") and an error in a model file under a long
# folder still name the whole path.
long=$tmp/a-folder-whose-name-is-long-enough-that-lua-would-cut-it-short
mkdir -p "$long"
printf 'return {\n' >"$long/syntax.lua"
fails long-syntax "$long/syntax.lua:2: unexpected symbol near <eof>" \
    "a syntax error under a long path names the whole path" plan "$long/syntax.lua" --db "$db"
printf 'local x = nil\nreturn x + 1\n' >"$long/runtime.lua"
fails long-runtime "$long/runtime.lua:2: attempt to perform arithmetic on a nil value (local 'x')" \
    "a runtime error under a long path names the whole path" plan "$long/runtime.lua" --db "$db"
printf 'error("boom")\n' >"$long/error.lua"
fails long-error "$long/error.lua:1: boom" "so does error(text)" plan "$long/error.lua" --db "$db"
printf 'return {\n' >"$long/model.lua"
scenario long-model.lua "\"$long/model.lua\"" "$h100"
fails long-model "$long/model.lua:2: unexpected symbol near <eof>" \
    "so does a syntax error in a model file it names" plan "$tmp/long-model.lua" --db "$db"

ok "$(test ! -e "$db"; echo $?)" "no failed command left a database behind"
done_testing
