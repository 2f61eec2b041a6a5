-- Per postings set a sealed statement tests (`sets`: one row each, numbered by `set`), how many
-- sessions it holds and how many were sealed from the same UTC day on: a small set is tested as a
-- hash set of its numbers (IN), a large one with the bitmap (src/query/sealed-postings.ts).
{{sets}}
