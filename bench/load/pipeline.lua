-- wrk script: a 16-deep HTTP/1.1 pipeline. request() returns 16 requests in
-- one string, so wrk writes them in one syscall and counts 16 responses,
-- the same shape as `bakeoff-load --pipeline 16`.
local depth = 16

init = function(args)
  local parts = {}
  for i = 1, depth do
    parts[i] = wrk.format()
  end
  batch = table.concat(parts)
end

request = function()
  return batch
end
