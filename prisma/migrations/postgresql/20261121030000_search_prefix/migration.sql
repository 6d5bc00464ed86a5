-- The SQLite migration of this name adds FTS5 prefix indexes. PostgreSQL needs no counterpart: a
-- prefix term (`rout:*`) is answered from the GIN index's sorted keys without merging lists first.
-- The step exists in both dialects so that their migration histories stay the same list.
SELECT 1;
