-- error() given a table: the message says so, at this line.
error({ reason = "no" })
