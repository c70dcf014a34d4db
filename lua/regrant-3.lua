--[[
  Turns a lapsed in-flight hold back into a ticket: its enroll's instance died, lost the commit's
  answer, or never sent the transaction, and PostgreSQL — read under the student's lock, after
  the deadline by its own clock — has no row for the student, so no transaction of that enroll
  can commit any more (src/holds/). Only the hold that was judged: a newer hold of the same
  student (another enroll since) carries another deadline and is left alone.

  KEYS[1] ticket    this student's ticket key
  KEYS[2] tickets   sorted set: student -> ticket expiry (ms)
  KEYS[3] inflight  sorted set: student -> deadline (ms)

  ARGV[1] student id
  ARGV[2] the new ticket's lifetime in ms
  ARGV[3] the judged hold's deadline (ms), as lapsed-1 answered it

  Output: 1 when the ticket was granted again; 0 when that hold was gone or not yet lapsed
]]
local rcall = redis.call
local deadline = rcall('ZSCORE', KEYS[3], ARGV[1])
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if not deadline or tonumber(deadline) ~= tonumber(ARGV[3]) or tonumber(deadline) > now then
  return 0
end
local ttl = tonumber(ARGV[2])
rcall('ZREM', KEYS[3], ARGV[1])
rcall('SET', KEYS[1], now + ttl, 'PX', ttl)
rcall('ZADD', KEYS[2], now + ttl, ARGV[1])
return 1
