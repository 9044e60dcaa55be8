-- 0160_league_results_period: the same index as SQLite's 0160. A
-- period's results by player (the league export's pages, and a
-- settlement's re-read of one period); the primary key (board, player,
-- period) serves a player's history, and reading one period through it
-- walks every period's rows.
CREATE INDEX league_results_period ON league_results (board, period, player);
