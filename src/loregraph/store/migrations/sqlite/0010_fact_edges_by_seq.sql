-- Graph expansion (fact_edges) reads the newest facts touching a few entities. With each entity's facts in seq
-- order the planner reads them from these indexes; with only (group_id, source_id, type) it took ~3x as long on
-- the 100k-fact group of `loregraph bench search` (4.0 vs 1.1 ms of SQL per search). PostgreSQL has the same pair
-- (its migration 0009).
CREATE INDEX IF NOT EXISTS facts_group_source_seq ON facts(group_id, source_id, seq);
CREATE INDEX IF NOT EXISTS facts_group_target_seq ON facts(group_id, target_id, seq);
