-- One durable single submit per request, random player and score.
local key = os.getenv("PODIUM_ADMIN_KEY") or "benchkey"
local board = os.getenv("BOARD") or "bench.wrk"
local players = tonumber(os.getenv("PLAYERS") or "100000")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. key
request = function()
  local body = string.format('{"player":"p%d","score":%d}', math.random(1, players), math.random(1, 1000000000))
  return wrk.format("POST", "/v1/boards/" .. board .. "/scores", nil, body)
end
