#!/bin/sh
# End to end: sizes past 64 bits or past 2^20 GPUs get one error line and a non-zero exit,
# never a crash or a stored run. models/lib may catch them first (with file:line); the C
# side refuses them on its own (t/layout-t, t/plan-t, t/topology-t prove that part), so
# these checks hold whichever layer speaks.
. "${SRCDIR:-.}/t/lib.sh"
bad=$SRCDIR/t/data/bad

# refuses NAME SCENARIO FIELD-PATTERN: exit 1 (not a signal), one stderr line that starts
# with "refit: " and matches the pattern, and no run in the database.
refuses() {
    db=$tmp/$1.db
    "$REFIT" plan "$2" --db "$db" --json >"$tmp/$1.out" 2>"$tmp/$1.err"
    is "$?" 1 "$1: refit plan exits 1"
    is "$(wc -l <"$tmp/$1.err" | tr -d ' ')" 1 "$1: one error line"
    grep -Eq "^refit: .*($3)" "$tmp/$1.err"
    ok $? "$1: the line names the field ($(cat "$tmp/$1.err"))"
    runs=0
    if [ -e "$db" ]; then runs=$(sql "$db" "SELECT count(*) FROM run"); fi
    is "$runs" 0 "$1: nothing is stored"
}

refuses hidden-vocab "$bad/c-hidden-vocab.lua" "hidden|vocab|embed_tokens\.weight\.shape"
refuses params "$bad/c-params.lua" "hidden|vocab|embed_tokens\.weight\.shape|params"
refuses first-gpu "$bad/c-first-gpu.lua" "first_gpu"

# A Hugging Face config.json with hidden_size = vocab_size = 2^32.
mkdir -p "$tmp/hf"
sed 's/"hidden_size": 4096/"hidden_size": 4294967296/; s/"vocab_size": 128256/"vocab_size": 4294967296/' \
    "$SRCDIR/t/data/hf/llama3-8b/config.json" >"$tmp/hf/config.json"
cat >"$tmp/hf.lua" <<EOS
return {
    model = "$tmp/hf/config.json",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2 },
    infer = { gpus = 2 },
}
EOS
refuses hf-config "$tmp/hf.lua" "hidden|vocab|embed_tokens\.weight\.shape"

done_testing
