-- One rank-of-player read per request, random existing player.
local board = os.getenv("BOARD") or "bench.wrk"
local players = tonumber(os.getenv("PLAYERS") or "100000")
request = function()
  return wrk.format("GET", string.format("/v1/boards/%s/entries/p%d", board, math.random(1, players)))
end
