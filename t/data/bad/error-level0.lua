-- error() at level 0 gives no place; the sandbox adds it, and keeps one line.

error("no place\ngiven", 0)
