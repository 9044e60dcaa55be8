-- 0110_player_index: on SQLite the player index of 0070 now holds only the
-- rows of boards with a quota or review holds. PostgreSQL keeps indexing
-- every row: its index insert is a small part of a commit that already
-- costs a network round trip, and several nodes read history from it. The
-- number stays in step with SQLite's 0110_player_index.
SELECT 1;
