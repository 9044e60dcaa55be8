-- One batch of 1000 scores per request (POST /v1/scores), random players.
local key = os.getenv("PODIUM_ADMIN_KEY") or "benchkey"
local board = os.getenv("BOARD") or "bench.wrk"
local players = tonumber(os.getenv("PLAYERS") or "100000")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. key
local bodies = {}
for b = 1, 16 do
  local items = {}
  for i = 1, 1000 do
    items[i] = string.format('{"board":"%s","player":"p%d","keys":[%d]}', board, math.random(1, players), math.random(1, 1000000000))
  end
  bodies[b] = '{"scores":[' .. table.concat(items, ",") .. ']}'
end
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "/v1/scores", nil, bodies[(n % 16) + 1])
end
