-- error() given a number.
error(42)
