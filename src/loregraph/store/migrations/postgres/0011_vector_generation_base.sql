-- A group's vectors of a kind held in a process's memory (PostgresStore.vector) are kept current by two tokens
-- the store's writes set in their transaction: gen changes with every write that changes the vectors, base only
-- with those that change or delete vectors already there. While base stays, a process reads only the rows
-- inserted after those it holds.
ALTER TABLE vector_generations ADD COLUMN IF NOT EXISTS base BIGINT;
