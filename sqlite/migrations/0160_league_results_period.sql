-- 0160_league_results_period: a period's results by player (the league
-- export's pages, and a settlement's re-read of one period). The primary
-- key (board, player, period) serves a player's history; reading one
-- period through it walks every period's rows.
CREATE INDEX league_results_period ON league_results (board, period, player);
