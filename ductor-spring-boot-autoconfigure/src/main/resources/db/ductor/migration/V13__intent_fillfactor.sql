-- An intent is inserted once and updated at least once (its completion). With half of each
-- page left free at insert, that update writes the new row version on the same page: no
-- lock record on the old page, and the log holds only the changed middle of the row instead
-- of the whole row. Applies to pages written from now on; nothing is rewritten.
ALTER TABLE eec_effect_intent SET (fillfactor = 50);
